//! vecgrep's library: every decision the toolkit makes lives here, so that the
//! binaries stay thin (parse arguments, call this crate, write records).
//!
//! The library never parses argv and never exits the process; it returns
//! errors with enough context for a binary to print one line and pick an exit
//! code.

pub mod assets;
pub mod chunk;
pub mod config;
pub mod embed;
pub mod format;
pub mod generated;
pub mod graph;
pub mod http;
pub mod index;
pub mod int8;
pub mod lexical;
pub mod live;
pub mod names;
pub(crate) mod onnx;
pub mod pick;
pub mod records;
pub mod remote;
pub mod root;
pub mod search;
pub mod serve;
pub mod store;
pub mod tools;
pub mod walk;

/// Name of the per-project directory that holds the index and project config.
pub const PROJECT_DIR: &str = ".vecgrep";
