//! The embedding model as ONNX Runtime is to run it: rewrites of the
//! shipped ONNX graph, done once and cached by `embed`.

pub mod graph;
pub mod int8;
pub(crate) mod onnx;
