//! The command-line front ends of the vecgrep toolkit. Each binary in
//! `src/bin/` parses its arguments with the clap definition in [`cli`] (the
//! one source of `--help`, man pages and completions), calls the library,
//! and writes records; [`app`] holds the glue they share.

pub mod app;
pub mod cli;
pub mod porcelain;
