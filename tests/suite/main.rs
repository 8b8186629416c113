//! The integration tests, one module per subject, built as one test binary: the suite links once
//! instead of once per file (about a minute of a 2-core CI run). `cargo test --profile ci --test
//! suite NAME` runs the tests whose path holds NAME (a module: `nsys::`).

mod categories_common;
mod common;

mod annotation_free;
mod as_recorded;
mod bad_input;
mod budget;
mod call_paths;
mod categories;
mod categories_dump;
mod categories_rules;
mod chunking;
mod cli;
mod compare;
mod copies;
mod core_counts;
mod findings;
mod fuzz_regressions;
mod gate;
mod graph_capture;
mod graph_nodes;
mod gzip_pipeline;
mod health;
mod html_report;
mod lateness;
mod layers;
mod layers_one_way;
mod mcp;
mod mixed;
mod name_blind;
mod nsys;
mod options_unlinked;
mod parallel_analyses;
mod parquet;
mod parts;
mod phases;
mod post_parse;
mod ranks;
mod repair;
mod roofline;
mod rule_coverage;
mod secrets;
mod sequence_matching;
mod sniff;
mod split;
mod table_types;
mod timeline_lod;
mod training_steps;
mod truncation;
mod warm_up;
mod watch;
mod workload;
mod xlsx;
mod xplane;
