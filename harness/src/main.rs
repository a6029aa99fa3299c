//! The `pinscope` binary: parse the command line, run, print any error as one sentence, exit.

fn main() {
    let code = pinscope::cli::main_with_args(std::env::args_os());
    std::process::exit(code);
}
