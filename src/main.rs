//! `traceprism`: the command-line face of the core, and (`traceprism mcp`) its Model Context
//! Protocol face. Both thin: parse the request, call the library, answer.

mod cli;
mod mcp;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let code = match args.split_first() {
        Some((cmd, rest)) if cmd == "mcp" => mcp::run(rest),
        _ => cli::run(&args),
    };
    std::process::exit(code);
}
