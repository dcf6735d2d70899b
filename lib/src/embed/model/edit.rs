//! The graph editing both rewrites (`int8`, `graph`) share: a model's graph
//! parsed once, with each node's position and who computes and who reads
//! each value; and the edit a rewrite makes (nodes replaced, dropped or
//! expanded, initializers added, removed or reshaped, recorded shapes that
//! no longer hold), written back with every field it does not touch copied
//! byte for byte.

use std::collections::{HashMap, HashSet};

use anyhow::Result;

use super::onnx::*;

/// A model's graph, parsed.
pub(crate) struct Graph<'m> {
    top: Vec<Field<'m>>,
    /// The graph's fields, in order.
    pub fields: Vec<Field<'m>>,
    /// Each node, with the position of its field in `fields`.
    pub nodes: Vec<(usize, Node)>,
    size: usize,
}

impl<'m> Graph<'m> {
    pub(super) fn parse(model: &'m [u8]) -> Result<Graph<'m>> {
        let top = parse(model)?;
        let bytes = graph_of(&top)?;
        let fields = parse(bytes)?;
        let mut nodes = Vec::new();
        for (i, f) in fields.iter().enumerate() {
            if f.num == GRAPH_NODE {
                nodes.push((i, node(f.data)?));
            }
        }
        Ok(Graph { top, fields, nodes, size: bytes.len() })
    }

    /// Node `k` (an index into `nodes`).
    pub(super) fn node(&self, k: usize) -> &Node {
        &self.nodes[k].1
    }

    /// The position of node `k`'s field in `fields`.
    pub(super) fn position(&self, k: usize) -> usize {
        self.nodes[k].0
    }

    /// Node `k` as encoded in the model.
    pub(super) fn encoded(&self, k: usize) -> &'m [u8] {
        self.fields[self.nodes[k].0].data
    }

    /// Whether node `k` is the default domain's `op_type` with `inputs` inputs and one output.
    pub(super) fn is(&self, k: usize, op_type: &str, inputs: usize) -> bool {
        self.nodes[k].1.is(op_type, inputs)
    }

    /// The node computing each value.
    pub(super) fn producers(&self) -> HashMap<&str, usize> {
        let mut producer = HashMap::new();
        for (k, (_, n)) in self.nodes.iter().enumerate() {
            for output in &n.outputs {
                producer.insert(output.as_str(), k);
            }
        }
        producer
    }

    /// The nodes reading each value, in graph order.
    pub(super) fn users(&self) -> HashMap<&str, Vec<usize>> {
        let mut users: HashMap<&str, Vec<usize>> = HashMap::new();
        for (k, (_, n)) in self.nodes.iter().enumerate() {
            for input in &n.inputs {
                users.entry(input.as_str()).or_default().push(k);
            }
        }
        users
    }
}

/// What a rewrite changes; positions are those of the graph's fields.
#[derive(Default)]
pub(crate) struct Edit {
    /// Node fields replaced by these encoded nodes.
    nodes: HashMap<usize, Vec<Vec<u8>>>,
    /// Node fields dropped, whatever else is said of them.
    dropped: HashSet<usize>,
    /// Initializers added after the graph's other fields, in order.
    added: Vec<Vec<u8>>,
    removed: HashSet<String>,
    /// Initializers whose shape becomes these dimensions.
    reshaped: HashMap<String, Vec<u64>>,
    /// Values no longer computed, or computed in another shape: their
    /// recorded shapes go.
    stale: HashSet<String>,
}

impl Edit {
    /// Put `nodes` where the node field at `position` was.
    pub(super) fn replace(&mut self, position: usize, nodes: Vec<Vec<u8>>) {
        self.nodes.insert(position, nodes);
    }

    pub(super) fn drop_node(&mut self, position: usize) {
        self.dropped.insert(position);
    }

    /// What is at the node field `position` now, when it changed.
    pub(super) fn replacement(&self, position: usize) -> Option<&[Vec<u8>]> {
        if self.dropped.contains(&position) {
            return Some(&[]);
        }
        self.nodes.get(&position).map(Vec::as_slice)
    }

    pub(super) fn add_initializer(&mut self, encoded: Vec<u8>) {
        self.added.push(encoded);
    }

    pub(super) fn remove_initializer(&mut self, name: &str) {
        self.removed.insert(name.to_string());
    }

    pub(super) fn reshape_initializer(&mut self, name: &str, dims: Vec<u64>) {
        self.reshaped.insert(name.to_string(), dims);
    }

    /// The shapes recorded for these values no longer hold.
    pub(super) fn forget_shapes<S: Into<String>>(&mut self, values: impl IntoIterator<Item = S>) {
        self.stale.extend(values.into_iter().map(Into::into));
    }

    pub(super) fn is_empty(&self) -> bool {
        self.nodes.is_empty()
            && self.dropped.is_empty()
            && self.added.is_empty()
            && self.removed.is_empty()
            && self.reshaped.is_empty()
    }

    /// The model with this edit made.
    pub(super) fn write(&self, graph: &Graph<'_>) -> Result<Vec<u8>> {
        let mut out = Vec::with_capacity(graph.size);
        for (i, f) in graph.fields.iter().enumerate() {
            if self.dropped.contains(&i) {
                continue;
            }
            if let Some(nodes) = self.nodes.get(&i) {
                for n in nodes {
                    write_bytes(&mut out, GRAPH_NODE, n);
                }
                continue;
            }
            match f.num {
                GRAPH_INITIALIZER => {
                    let t = tensor(f.data)?;
                    if self.removed.contains(&t.name) {
                        continue;
                    }
                    match self.reshaped.get(&t.name) {
                        Some(dims) => write_bytes(&mut out, GRAPH_INITIALIZER, &reshape_tensor(f.data, dims)?),
                        None => write_bytes(&mut out, GRAPH_INITIALIZER, f.data),
                    }
                }
                GRAPH_VALUE_INFO => {
                    let name = value_info_name(f.data)?;
                    if !name.is_some_and(|n| self.stale.contains(&n) || self.reshaped.contains_key(&n)) {
                        write_field(&mut out, f.num, f.wire, f.data);
                    }
                }
                _ => write_field(&mut out, f.num, f.wire, f.data),
            }
        }
        for t in &self.added {
            write_bytes(&mut out, GRAPH_INITIALIZER, t);
        }
        with_graph(&graph.top, &out)
    }
}
