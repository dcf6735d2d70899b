//! Integration tests: they drive the real binaries, with the real model, on
//! temporary project trees. One test binary holds every module so the
//! toolkit is linked once.

mod common;

mod answer;
mod ask;
mod catalog;
mod concepts;
mod contract;
mod docs;
mod filters;
mod format;
mod index;
mod install;
mod log;
mod mcp;
mod mcp_flow;
mod modes;
mod pg;
mod pick;
mod porcelain;
mod query;
mod remote;
mod revisions;
mod robust;
mod root;
mod serve;
mod shared;
mod tiers;
