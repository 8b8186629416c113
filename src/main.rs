//! `traceprism`: the command-line face of the core. Thin: parse arguments, call the library, print.

mod cli;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    std::process::exit(cli::run(&args));
}
