//! Phase signals as data: loads `rules/phase_signals.toml` (embedded) into compiled regexes.

use regex::Regex;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::sync::OnceLock;

/// The embedded rule text.
pub const PHASE_SIGNALS_TOML: &str = include_str!("../../rules/phase_signals.toml");

#[derive(Deserialize)]
struct RawRules {
    thresholds: Thresholds,
    weights: Weights,
    annotation: Vec<RawAnnotation>,
    annotation_kinds: BTreeMap<String, String>,
    markers: RawMarkers,
    shape_op: Vec<RawShapeOp>,
    name_hint: Vec<RawNameHint>,
    gemm_tile: Vec<RawGemmTile>,
    gemm_tiles: GemmTiles,
    training: RawTraining,
    workload: RawWorkload,
    #[serde(default)]
    doubt: Doubt,
    #[serde(default)]
    batch_limit: RawBatchLimit,
}

#[derive(Deserialize, Default)]
struct RawBatchLimit {
    #[serde(default)]
    keys: Vec<String>,
}

/// When a pass's phase is doubted (`[doubt]` of the TOML; see `doubt.rs`).
#[derive(Debug, Clone, Deserialize)]
pub struct Doubt {
    /// Another phase's weighted support at least this share of the chosen phase's: conflicting.
    pub conflict_ratio: f64,
    /// The chosen phase's weighted support below this: thin.
    pub min_support: f64,
}

impl Default for Doubt {
    fn default() -> Self {
        Doubt { conflict_ratio: 0.5, min_support: 1.0 }
    }
}

#[derive(Deserialize)]
struct RawWorkload {
    min_step_kernels: usize,
    min_step_attention: usize,
    min_step_alignment: f64,
    diffusion_names: Vec<String>,
    llm_names: Vec<String>,
    #[serde(default)]
    batching_engine_names: Vec<String>,
    #[serde(default)]
    generation_categories: Vec<String>,
}

/// How repeated steps and the kind of workload are recognised (`[workload]` of the TOML).
#[derive(Debug, Clone)]
pub struct WorkloadRules {
    /// A step holds at least this many kernels.
    pub min_step_kernels: usize,
    /// ... and at least this many attention kernels.
    pub min_step_attention: usize,
    /// Share of a step's positions where every step runs the same kernel.
    pub min_step_alignment: f64,
    /// Names that show a diffusion pipeline.
    pub diffusion_names: Vec<Regex>,
    /// Names that show an LLM engine or generation loop.
    pub llm_names: Vec<Regex>,
    /// Names that show a serving engine that batches requests continuously (decode requests
    /// beside a prefill chunk in one step): an unannotated prefill of such an engine may be mixed.
    pub batching_engine_names: Vec<Regex>,
    /// Kernel categories that show token generation (KV-cache writes, paged or decode attention).
    pub generation_categories: Vec<String>,
}

/// Numeric thresholds (see the TOML for meaning).
#[derive(Debug, Clone, Deserialize)]
pub struct Thresholds {
    /// GEMM M above this is prefill-like (0: learnt from the trace).
    pub decode_threshold: i64,
    /// A segment with fewer kernels than this share of its device's largest is merged into its
    /// neighbour, not a pass.
    pub min_pass_kernel_share: f64,
    /// A pass whose kernel time is this multiple of the median pass is prefill-like.
    pub prefill_time_ratio: f64,
    /// Passes within [1/ratio, ratio] of the median kernel time are alike (decode-like).
    pub alike_time_ratio: f64,
    /// Passes a device needs before `operation_frequency` votes.
    pub min_passes_for_frequency: usize,
    /// Backward or optimizer kernels and ops that make a trace training.
    pub min_training_events: usize,
    /// Ancestor levels walked from a kernel's op when looking for GEMM, attention or marker ops.
    pub max_op_depth: usize,
    /// A pass whose attention kernels are not those of its device's alike passes is prefill-like
    /// (or mixed, with theirs beside its own) when its kernel time is at least this multiple of
    /// the median pass (see `attention_contrast_ratio` in the TOML).
    #[serde(default = "default_contrast_ratio")]
    pub attention_contrast_ratio: f64,
    /// A device's only pass with decode evidence that needs no other pass (decode attention
    /// kernels, a whole-forward graph replay) is a decode batch up to this many tokens, whatever
    /// `decode_threshold` (no gap to learn it from with one pass).
    #[serde(default)]
    pub single_pass_decode_max_tokens: u64,
}

fn default_attention_families() -> Vec<String> {
    vec!["Attention".into()]
}

fn default_contrast_ratio() -> f64 {
    1.2
}

/// Voting weight of each method in `union`.
#[derive(Debug, Clone, Deserialize)]
pub struct Weights {
    /// `framework_apis`' weight.
    pub framework_apis: f64,
    /// `attention_patterns`' weight.
    pub attention_patterns: f64,
    /// `gemm_params`' weight.
    pub gemm_params: f64,
    /// `kernel_names`' weight.
    pub kernel_names: f64,
    /// `operation_frequency`' weight.
    pub operation_frequency: f64,
}

#[derive(Deserialize)]
struct RawAnnotation {
    name: String,
    regex: String,
    #[serde(default)]
    module_runs: bool,
}
#[derive(Deserialize)]
struct RawMarkers {
    start_ops: Vec<String>,
    end_ops: Vec<String>,
    #[serde(default)]
    end_ops_not_on: Vec<String>,
    end_kernels: Vec<String>,
    #[serde(default)]
    start_kernels: Vec<String>,
    #[serde(default)]
    sampling_kernels: Vec<String>,
    full_graph_min_kernels: usize,
}
#[derive(Deserialize)]
struct RawShapeOp {
    regex: String,
    kind: String,
    input: usize,
}
#[derive(Deserialize)]
struct RawNameHint {
    regex: String,
    #[serde(default)]
    unless: Option<String>,
    phase: String,
    method: String,
    strength: f64,
}
#[derive(Deserialize)]
struct RawGemmTile {
    regex: String,
    tokens_group: String,
}
/// GEMM tile thresholds.
#[derive(Debug, Clone, Deserialize)]
pub struct GemmTiles {
    /// A token tile at most this is skinny.
    pub skinny_max: u32,
    /// A token tile at least this is wide.
    pub wide_min: u32,
    /// Share of tiled GEMMs that must be skinny to vote decode.
    pub skinny_min_share: f64,
    /// Share of tiled GEMMs that must be wide to vote prefill.
    pub wide_min_share: f64,
    /// The vote's strength.
    pub strength: f64,
}
#[derive(Deserialize)]
struct RawTraining {
    ops: Vec<String>,
    kernels: Vec<String>,
    attention_ops: Vec<String>,
    attention_kernels: Vec<String>,
    /// Kernel-category families whose kernels are attention (`categories.toml`'s `family`).
    #[serde(default = "default_attention_families")]
    attention_families: Vec<String>,
}

/// A step-annotation format.
#[derive(Debug, Clone)]
pub struct AnnotationFormat {
    /// The format's name (`vllm`, `sglang`...).
    pub name: String,
    /// What its annotations look like, with named groups for kind, tokens and batch.
    pub regex: Regex,
    /// Runs of a compiled module (the XSpace reader's `XlaModule:` ranges), not an engine's steps:
    /// they cut passes, but a phase word in the module's name is only a hint.
    pub module_runs: bool,
}

/// How a shape op's `Input Dims` are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShapeKind {
    /// `[..., S, K]` activations: tokens = product of leading dims, seq = dims[-2] if 3-D.
    Linear,
    /// `[M, K]`: M = `dims[0]`.
    Mm,
    /// SDPA query `[B, H, Sq, D]` and key `[B, Hk, Sk, D]`.
    Sdpa,
    /// Packed tokens `[T, heads, head_dim]` (varlen attention, KV-cache writes): T = `dims[0]`.
    Varlen,
}

/// One op whose shapes carry phase evidence.
#[derive(Debug, Clone)]
pub struct ShapeOp {
    /// The op's name.
    pub regex: Regex,
    /// How its `Input Dims` are read.
    pub kind: ShapeKind,
    /// Which input carries the evidence.
    pub input: usize,
}

/// A kernel-name hint.
#[derive(Debug, Clone)]
pub struct NameHint {
    /// The kernel names it matches.
    pub regex: Regex,
    /// The hint does not hold for a name this also matches (what the name's template says
    /// overrules the word in it: FlashInfer's `BatchPrefill…` kernel with no causal mask).
    pub unless: Option<Regex>,
    /// The phase it hints.
    pub phase: super::Phase,
    /// `kernel_names` or `attention_patterns`.
    pub method: String,
    /// How strongly.
    pub strength: f64,
}

/// A GEMM kernel-name tile pattern.
#[derive(Debug, Clone)]
pub struct GemmTile {
    /// The kernel names it matches.
    pub regex: Regex,
    /// The named group holding the token tile.
    pub tokens_group: String,
}

/// All phase rules, compiled.
#[derive(Debug, Clone)]
pub struct PhaseRules {
    /// Numeric thresholds.
    pub thresholds: Thresholds,
    /// Voting weights.
    pub weights: Weights,
    /// Step-annotation formats.
    pub annotations: Vec<AnnotationFormat>,
    /// SGLang-style kind word → phase.
    pub annotation_kinds: BTreeMap<String, super::Phase>,
    /// Ops that begin a step.
    pub start_ops: Vec<Regex>,
    /// Ops that end a step (the sampler).
    pub end_ops: Vec<Regex>,
    /// `Input type` texts on which an end op picks an index, not a token (CLIP's argmax over
    /// integer token ids): such an op ends no step.
    pub end_ops_not_on: Vec<Regex>,
    /// Kernels that begin a step (an engine's own embedding lookup), in any spelling.
    pub start_kernels: AnySpelling,
    /// Kernels that end a step (the token's sampler), in any spelling.
    pub end_kernels: AnySpelling,
    /// Kernels that sample a token from logits: the evidence of generation in a trace with no CPU
    /// op (a profile of the GPU alone), in any spelling.
    pub sampling_kernels: AnySpelling,
    /// A graph replay with at least this many kernels starts a step.
    pub full_graph_min_kernels: usize,
    /// Ops whose shapes carry phase evidence.
    pub shape_ops: Vec<ShapeOp>,
    /// Kernel-name hints.
    pub name_hints: Vec<NameHint>,
    /// GEMM tile patterns in kernel names.
    pub gemm_tile_patterns: Vec<GemmTile>,
    /// GEMM tile thresholds.
    pub gemm_tiles: GemmTiles,
    /// Ops that show training (backward, optimizer).
    pub training_ops: Vec<Regex>,
    /// Kernels that show training.
    pub training_kernels: Vec<Regex>,
    /// Attention ops.
    pub attention_ops: Vec<Regex>,
    /// Attention kernels.
    pub attention_kernels: Vec<Regex>,
    /// Kernel-category families of attention kernels (beside the `attention_kernels` names).
    pub attention_families: Vec<String>,
    /// What tells a workload's kind.
    pub workload: WorkloadRules,
    /// When a pass's phase is doubted.
    pub doubt: Doubt,
    /// Metadata keys (dotted paths of `TraceMeta::other`) holding an engine's limit on the
    /// sequences one step batches (`max_num_seqs`, `max_running_requests`).
    pub batch_limit_keys: Vec<Regex>,
}

/// Parses a phase name as used in the rules (`prefill`, `decode`, `mixed`).
pub fn parse_phase(s: &str) -> Option<super::Phase> {
    use super::Phase;
    match s {
        "prefill" => Some(Phase::Prefill),
        "decode" => Some(Phase::Decode),
        "mixed" => Some(Phase::Mixed),
        _ => None,
    }
}

fn compile(list: &[String]) -> Result<Vec<Regex>, String> {
    list.iter().map(|r| Regex::new(r).map_err(|e| format!("bad regex {r:?}: {e}"))).collect()
}

impl NameHint {
    /// Whether the hint holds for kernel name `name`.
    pub fn holds(&self, name: &str) -> bool {
        self.regex.is_match(name) && !self.unless.as_ref().is_some_and(|u| u.is_match(name))
    }
}

impl PhaseRules {
    /// Whether end op `o` (one of [`PhaseRules::end_ops`] by name) picks an index rather than a
    /// token: its `Input type` says its input is integer ids ([`PhaseRules::end_ops_not_on`]).
    pub fn end_op_picks_an_index(&self, trace: &crate::model::Trace, o: usize) -> bool {
        let types = trace.name(trace.ops.input_types[o]);
        self.end_ops_not_on.iter().any(|r| r.is_match(types))
    }

    /// Parses rule text in the format of `rules/phase_signals.toml`.
    pub fn parse(text: &str) -> Result<PhaseRules, String> {
        let raw: RawRules = toml::from_str(text).map_err(|e| format!("phase rules: {e}"))?;
        let re = |r: &str| Regex::new(r).map_err(|e| format!("bad regex {r:?}: {e}"));
        Ok(PhaseRules {
            thresholds: raw.thresholds,
            weights: raw.weights,
            annotations: raw
                .annotation
                .iter()
                .map(|a| Ok(AnnotationFormat { name: a.name.clone(), regex: re(&a.regex)?, module_runs: a.module_runs }))
                .collect::<Result<_, String>>()?,
            annotation_kinds: raw.annotation_kinds.iter().filter_map(|(k, v)| Some((k.clone(), parse_phase(v)?))).collect(),
            start_ops: compile(&raw.markers.start_ops)?,
            end_ops: compile(&raw.markers.end_ops)?,
            end_ops_not_on: compile(&raw.markers.end_ops_not_on)?,
            end_kernels: AnySpelling::compile(&raw.markers.end_kernels)?,
            start_kernels: AnySpelling::compile(&raw.markers.start_kernels)?,
            sampling_kernels: AnySpelling::compile(&raw.markers.sampling_kernels)?,
            full_graph_min_kernels: raw.markers.full_graph_min_kernels,
            shape_ops: raw
                .shape_op
                .iter()
                .map(|s| {
                    let kind = match s.kind.as_str() {
                        "linear" => ShapeKind::Linear,
                        "mm" => ShapeKind::Mm,
                        "sdpa" => ShapeKind::Sdpa,
                        "varlen" => ShapeKind::Varlen,
                        other => return Err(format!("unknown shape kind {other:?}")),
                    };
                    Ok(ShapeOp { regex: re(&s.regex)?, kind, input: s.input })
                })
                .collect::<Result<_, String>>()?,
            name_hints: raw
                .name_hint
                .iter()
                .map(|h| {
                    let phase = parse_phase(&h.phase).ok_or_else(|| format!("unknown phase {:?}", h.phase))?;
                    Ok(NameHint {
                        regex: re(&h.regex)?,
                        unless: h.unless.as_deref().map(re).transpose()?,
                        phase,
                        method: h.method.clone(),
                        strength: h.strength.clamp(0.0, 1.0),
                    })
                })
                .collect::<Result<_, String>>()?,
            gemm_tile_patterns: raw
                .gemm_tile
                .iter()
                .map(|g| Ok(GemmTile { regex: re(&g.regex)?, tokens_group: g.tokens_group.clone() }))
                .collect::<Result<_, String>>()?,
            gemm_tiles: raw.gemm_tiles,
            training_ops: compile(&raw.training.ops)?,
            training_kernels: compile(&raw.training.kernels)?,
            attention_ops: compile(&raw.training.attention_ops)?,
            attention_kernels: compile(&raw.training.attention_kernels)?,
            attention_families: raw.training.attention_families.clone(),
            doubt: raw.doubt.clone(),
            batch_limit_keys: compile(&raw.batch_limit.keys)?,
            workload: WorkloadRules {
                min_step_kernels: raw.workload.min_step_kernels.max(2),
                min_step_attention: raw.workload.min_step_attention,
                min_step_alignment: raw.workload.min_step_alignment.clamp(0.0, 1.0),
                diffusion_names: compile(&raw.workload.diffusion_names)?,
                llm_names: compile(&raw.workload.llm_names)?,
                batching_engine_names: compile(&raw.workload.batching_engine_names)?,
                generation_categories: raw.workload.generation_categories.clone(),
            },
        })
    }

    /// The embedded default rules (parsed once).
    pub fn builtin() -> &'static PhaseRules {
        static RULES: OnceLock<PhaseRules> = OnceLock::new();
        RULES.get_or_init(|| PhaseRules::parse(PHASE_SIGNALS_TOML).expect("embedded phase_signals.toml is valid"))
    }
}

/// A name in the one spelling [`AnySpelling`] patterns are written for: lower case, without
/// underscores (`topk_stage2_sampling` and `topKStage2Sampling` are both `topkstage2sampling`).
pub fn fold_spelling(name: &str) -> String {
    name.chars().filter(|&c| c != '_').flat_map(char::to_lowercase).collect()
}

/// Patterns matched against a kernel name folded by [`fold_spelling`], so that one rule covers
/// every engine's spelling of the same kernel: snake_case (FasterTransformer's
/// `topk_stage2_sampling`), CamelCase (TensorRT-LLM's `topKStage2Sampling`), FlashInfer's
/// `SamplingFromProbKernel`.
#[derive(Debug, Clone, Default)]
pub struct AnySpelling(Vec<Regex>);

impl AnySpelling {
    /// Compiles patterns written folded (lower case, no underscore); one that is not is an error
    /// that names it, since it could never match.
    pub fn compile(list: &[String]) -> Result<AnySpelling, String> {
        for r in list {
            // An upper-case letter is allowed only as an escape's (`\D`, `\S`, `\W`).
            let upper = r.char_indices().any(|(i, c)| c.is_ascii_uppercase() && !r[..i].ends_with('\\'));
            if r.contains('_') || upper {
                return Err(format!(
                    "{r:?}: write kernel-name patterns folded (lower case, no underscores): names are folded before they are matched"
                ));
            }
        }
        compile(list).map(AnySpelling)
    }

    /// True if any pattern matches `name` folded.
    pub fn matches(&self, name: &str) -> bool {
        !self.0.is_empty() && {
            let folded = fold_spelling(name);
            self.0.iter().any(|r| r.is_match(&folded))
        }
    }
}

/// True if any regex matches `s`.
pub fn any_match(list: &[Regex], s: &str) -> bool {
    list.iter().any(|r| r.is_match(s))
}

#[cfg(test)]
mod tests {
    /// Real spellings of the samplers that end a generation step, from public engines' sources.
    #[test]
    fn every_spelling_of_a_sampler_is_one_rule() {
        let r = super::PhaseRules::builtin();
        let samplers = [
            // FasterTransformer (src/fastertransformer/kernels/sampling_topk_kernels.cu).
            "void fastertransformer::topk_stage2_sampling<float, 128, 8>(int const*, float*, int**, int*, bool*, float*, float*, int, int const*, float, float const*, int, int const*, bool const*)",
            // TensorRT-LLM (cpp/tensorrt_llm/kernels/samplingTopKKernels.cu, samplingTopPKernels.cu,
            // samplingAirTopPKernels.cu).
            "void tensorrt_llm::kernels::topKStage2Sampling<__half, 128, 8>(int const*, __half*, int**, int*, int*)",
            "void tensorrt_llm::kernels::topPSsampling<float, 256>(float*, int*, int**, int*, bool const*)",
            "void tensorrt_llm::kernels::airTopPSampling<float, int, 11, 512>(tensorrt_llm::kernels::Counter<float, int>*)",
            // FlashInfer (include/flashinfer/sampling.cuh), as vLLM and SGLang launch them.
            "void flashinfer::sampling::TopKTopPSamplingFromProbKernel<1024u, (cub::BlockScanAlgorithm)2, (cub::BlockReduceAlgorithm)2, 4u, false, float, int>(float*, int*, int*, float*, int*, unsigned int, float, unsigned int, unsigned long, unsigned long)",
            "void flashinfer::sampling::SamplingFromLogitsKernel<1024u, (cub::BlockScanAlgorithm)2, (cub::BlockReduceAlgorithm)2, 4u, true, float, int>(float*, int*, int*, unsigned int, bool, unsigned long, unsigned long)",
            "void flashinfer::sampling::TopPSamplingFromProbKernel<1024u, (cub::BlockScanAlgorithm)2, (cub::BlockReduceAlgorithm)2, 4u, false, float, int>(float*, int*, int*, float*, float, unsigned int, unsigned long, unsigned long)",
            // ATen (argmax over float logits; multinomial).
            "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<c10::BFloat16, at::native::ArgMaxOps<float>, unsigned int, long, 4, 4> >(at::native::ReduceOp<c10::BFloat16, at::native::ArgMaxOps<float>, unsigned int, long, 4, 4>)",
            "void at::native::(anonymous namespace)::sampleMultinomialOnce<float, float>(long*, long, int, float*, float*, int, int, int, int)",
            // Triton samplers named in snake_case.
            "topk_topp_sampling_kernel",
            "argmax_sampling_kernel",
        ];
        for name in samplers {
            assert!(r.end_kernels.matches(name), "ends a step: {name}");
            assert!(r.sampling_kernels.matches(name), "samples a token: {name}");
        }
        // Parts of a sampler that are not the sample, and kernels that only look like one.
        let not = [
            "void fastertransformer::topk_stage1<float, 128, 8>(float const*, float*, int*, float*, bool const*, int, int, int const*, int, int const*)",
            "void tensorrt_llm::kernels::topKStage1<__half, 128, 8>(__half const*, __half*, int*, __half*, int, int)",
            "setup_topk_runtime_args(int, unsigned int, int*, int, float*, int, bool*)",
            "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<long, at::native::ArgMaxOps<long>, unsigned int, long, 4, 4> >(at::native::ReduceOp<long, at::native::ArgMaxOps<long>, unsigned int, long, 4, 4>)",
            "void vllm::moe::topkGatingSoftmax<8, 128, 4, 16>(float const*, bool const*, float*, int, int*, int*, int, int, int)",
        ];
        for name in not {
            assert!(!r.sampling_kernels.matches(name), "samples no token: {name}");
        }
        assert!(!r.end_kernels.matches(not[0]) && !r.end_kernels.matches(not[2]));
    }

    /// FlashInfer's prefill kernel says by its template whether it runs a prompt (causal mask) or
    /// decodes (no mask): the template overrules the word "Prefill".
    #[test]
    fn a_flashinfer_prefill_kernel_without_a_mask_is_decode_evidence() {
        let r = super::PhaseRules::builtin();
        let phases =
            |name: &str| -> Vec<&str> { r.name_hints.iter().filter(|h| h.holds(name)).map(|h| h.phase.as_str()).collect() };
        // As FlashInfer 0.2+ names them (KernelTraits<MaskMode, CTA_TILE_Q, ...>).
        let decode = "void flashinfer::BatchPrefillWithPagedKVCacheKernel<flashinfer::KernelTraits<(flashinfer::MaskMode)0, 16u, 1u, 8u, 2u, 4u, 1u, (flashinfer::PosEncodingMode)0, __nv_bfloat16, __nv_bfloat16, __nv_bfloat16, float, int, flashinfer::DefaultAttention<false, false, false, false> >, flashinfer::PagedParams<__nv_bfloat16, __nv_bfloat16, __nv_bfloat16, int> >(flashinfer::PagedParams<__nv_bfloat16, __nv_bfloat16, __nv_bfloat16, int>)";
        let prompt = decode.replace("(flashinfer::MaskMode)0, 16u", "(flashinfer::MaskMode)1, 128u");
        assert_eq!(phases(decode), ["decode"]);
        assert_eq!(phases(&prompt), ["prefill"]);
        // Older FlashInfer (0.1): the mask mode is a template argument of the kernel itself.
        let old = "void flashinfer::BatchPrefillWithRaggedKVCacheKernel<(flashinfer::LogitsPostHook)0, (flashinfer::MaskMode)1, (flashinfer::PosEncodingMode)0, 1u, 4u, 4u, 1u, __half, __half, float, int>(__half*)";
        assert_eq!(phases(old), ["prefill"]);
    }

    #[test]
    fn a_pattern_not_written_folded_is_refused() {
        let bad = |p: &str| super::AnySpelling::compile(&[p.to_string()]).is_err();
        assert!(bad("topK_stage2"));
        assert!(bad("SamplingFromProb"));
        assert!(!bad("top[kp](stage\\d+)?\\Ssampling"));
    }

    #[test]
    fn builtin_rules_parse() {
        let r = super::PhaseRules::builtin();
        assert!(r.annotations.len() >= 3);
        assert!(r.thresholds.decode_threshold > 0);
    }
}
