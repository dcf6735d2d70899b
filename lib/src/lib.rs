//! vecgrep's library: every decision the toolkit makes lives here, so that the
//! binaries stay thin (parse arguments, call this crate, write records).
//!
//! The library never parses argv and never exits the process; it returns
//! errors with enough context for a binary to print one line and pick an exit
//! code.

pub mod chunk;
pub mod embed;
pub mod format;
pub mod index;
pub mod live;
pub mod pick;
pub mod project;
pub mod records;
pub mod search;
pub mod serve;
pub mod store;
pub mod terms;
pub mod tools;
