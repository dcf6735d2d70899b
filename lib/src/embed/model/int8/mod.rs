//! Make ONNX Runtime multiply in int8: rewrite the model's weight-only int8
//! layers (`MatMul(X, Mul(Cast(W_int8), scale))`) into `DynamicQuantizeMatMul`
//! (X quantized to uint8 per run, W's own int8 values and per-column scales).
//!
//! The export we ship stores its weights as int8 but has ONNX Runtime turn
//! them back into fp32 at load, so every product ran in fp32. In int8 the
//! products use the CPU's integer dot-product instructions: with every
//! product in int8 the model embeds about twice as many tokens per second
//! (`cargo run --release --example embed_speed`), and the vectors keep a
//! cosine similarity of about 0.994 with the fp32 ones. Which products stay
//! in fp32, wholly or for a few input channels (`Precision`), is the
//! caller's choice (`model::model_bytes`), made on `bench/eval.sh`. With the
//! widest 128 input channels of each feed-forward output projection in
//! fp32 and everything else in int8, the vectors keep a cosine of 0.997 with
//! the fp32 ones (300 of tokio's chunks), as with that projection wholly in
//! fp32, at 1.4x that setting's throughput.
//!
//! A bias added right after an int8 product becomes the product's own bias
//! input, added as its results are scaled, instead of one more pass over
//! the activations. A product split at its widest input channels has its
//! feeding product split by columns to match (`split_product`), so that
//! neither part is sliced out of the other. Together these cut the model's
//! time by about a tenth (`embed_speed`), and the hidden states stay
//! bit-identical.
//!
//! Embedding tables stored the same way (`Gather(Mul(Cast(table), scale),
//! ids)`) become `Mul(Cast(Gather(table, ids)), Gather(scale, ids))`: the rows
//! a text uses are dequantized when used, so the table stays int8 in memory
//! (12 MB instead of 47 MB for each loaded model), with the same values.
//!
//! The rewrite works on the protobuf encoding directly, with just enough of
//! the format to find and replace nodes; everything it does not touch is
//! copied through byte for byte.

use anyhow::Result;
use std::collections::{HashMap, HashSet};

use super::edit::{Edit, Graph};
use super::onnx::*;

mod split;

use split::{feeding_weight, split_product};

/// Changes whenever the rewrite does, so that caches of its output are rebuilt.
pub(crate) const VERSION: u32 = 6;

/// A weight `Mul(Cast(q), scale)` that a MatMul may use in int8 instead.
struct Weight {
    mul_node: usize,
    cast_node: usize,
    quantized: String,
    scale: String,
    /// Rows and columns of the weight.
    shape: (u64, u64),
    /// One scale per column (`[1, columns]`), else one per row (`[rows, 1]`).
    per_column: bool,
}

impl Weight {
    /// Whether `q` (int8 values) and `scale` (one fp32 per column) are
    /// as many as this weight's shape says.
    fn holds(&self, q: &[u8], scale: &[u8]) -> bool {
        let (rows, cols) = (self.shape.0 as usize, self.shape.1 as usize);
        rows.checked_mul(cols) == Some(q.len()) && cols.checked_mul(4) == Some(scale.len())
    }
}

/// How a product with an int8 weight is to be computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Precision {
    /// As the model says: the weight is turned back into fp32 at load.
    #[allow(dead_code)] // the policy `embed` uses picks no product for fp32 today
    Fp32,
    /// In int8, the input quantized to 8 bits per run.
    Int8,
    /// In int8 but for `n` of the input's channels, which are multiplied in
    /// fp32 beside it: those that the product feeding the input (through
    /// its bias and activation) can make largest, judged by that product's
    /// weights (`widest_channels`). A few channels of a feed-forward
    /// layer's activations run far wider than the rest, and one 8-bit range
    /// for the whole input spends its steps on them. Where no such product
    /// is found the weight stays in fp32.
    Int8ButWidest(usize),
}

/// Rewrite `model` (the bytes of an ONNX file). `precision(rows, columns)`
/// says how to compute each product with a weight of that shape. Returns
/// the new model and how many products it now computes in int8; a model with
/// none to rewrite comes back unchanged with a count of 0.
pub(crate) fn rewrite(model: &[u8], precision: &dyn Fn(u64, u64) -> Precision) -> Result<(Vec<u8>, usize)> {
    let graph = Graph::parse(model)?;
    let view = View::of(&graph)?;
    let mut rewrite = Rewrite { view: &view, edit: Edit::default(), claimed: HashSet::new(), products: 0 };
    // Products split at their widest input channels come first, with the
    // products feeding them: those are rewritten as part of the split.
    for k in 0..graph.nodes.len() {
        rewrite.split_at_widest(k, precision);
    }
    for k in 0..graph.nodes.len() {
        if graph.is(k, "Gather", 2) {
            rewrite.gather(k);
        } else {
            rewrite.product(k, precision)?;
        }
    }
    if rewrite.edit.is_empty() {
        return Ok((model.to_vec(), 0));
    }
    Ok((rewrite.edit.write(&graph)?, rewrite.products))
}

/// What the rewrite looks up about a graph: its initializers, who reads
/// and who computes each value, and its int8 weights by the value they make.
struct View<'g> {
    graph: &'g Graph<'g>,
    initializers: HashMap<String, Tensor>,
    encoded_initializers: HashMap<String, &'g [u8]>,
    users: HashMap<&'g str, Vec<usize>>,
    producer: HashMap<&'g str, usize>,
    weights: HashMap<&'g str, Weight>,
}

impl<'g> View<'g> {
    fn of(graph: &'g Graph<'g>) -> Result<View<'g>> {
        let mut initializers = HashMap::new();
        let mut encoded_initializers = HashMap::new();
        for f in graph.fields.iter().filter(|f| f.num == GRAPH_INITIALIZER) {
            let t = tensor(f.data)?;
            encoded_initializers.insert(t.name.clone(), f.data);
            initializers.insert(t.name.clone(), t);
        }
        let mut view = View {
            graph,
            initializers,
            encoded_initializers,
            users: graph.users(),
            producer: graph.producers(),
            weights: HashMap::new(),
        };
        view.weights = view.find_weights();
        Ok(view)
    }

    fn node(&self, k: usize) -> &'g Node {
        self.graph.node(k)
    }

    /// Whether node `k` is the only reader of `name`.
    fn only_used_by(&self, name: &str, k: usize) -> bool {
        self.users.get(name).is_some_and(|u| u.len() == 1 && u[0] == k)
    }

    /// An initializer's values, as stored.
    fn values(&self, name: &str) -> Option<&'g [u8]> {
        self.encoded_initializers.get(name).and_then(|t| raw_data(t))
    }

    /// Weights: `Mul(Cast(int8 [rows, cols]), float [1, cols] or [rows, 1])`, each part used once.
    fn find_weights(&self) -> HashMap<&'g str, Weight> {
        let mut cast_of: HashMap<&str, usize> = HashMap::new();
        for (k, (_, n)) in self.graph.nodes.iter().enumerate() {
            let is_int8_matrix =
                |name: &str| self.initializers.get(name).is_some_and(|t| t.data_type == TYPE_INT8 && t.dims.len() == 2);
            if n.is("Cast", 1) && is_int8_matrix(&n.inputs[0]) {
                cast_of.insert(n.outputs[0].as_str(), k);
            }
        }
        let mut weights = HashMap::new();
        for (k, (_, n)) in self.graph.nodes.iter().enumerate() {
            if !n.is("Mul", 2) {
                continue;
            }
            let Some(&cast_node) = cast_of.get(n.inputs[0].as_str()) else { continue };
            let quantized = &self.node(cast_node).inputs[0];
            let (Some(q), Some(s)) = (self.initializers.get(quantized), self.initializers.get(&n.inputs[1])) else {
                continue;
            };
            let per_column = s.data_type == TYPE_FLOAT && s.dims.len() == 2 && s.dims[0] == 1 && s.dims[1] == q.dims[1];
            let per_row = s.data_type == TYPE_FLOAT && s.dims.len() == 2 && s.dims[1] == 1 && s.dims[0] == q.dims[0];
            if !(per_column || per_row) || !self.only_used_by(&n.inputs[0], k) || !self.only_used_by(&n.inputs[1], k) {
                continue;
            }
            let weight = Weight {
                mul_node: k,
                cast_node,
                quantized: quantized.clone(),
                scale: n.inputs[1].clone(),
                shape: (q.dims[0], q.dims[1]),
                per_column,
            };
            weights.insert(self.graph.node(k).outputs[0].as_str(), weight);
        }
        weights
    }
}

/// The rewrite in progress: the edit so far, the nodes a split has taken,
/// and how many products now run in int8.
struct Rewrite<'v, 'g> {
    view: &'v View<'g>,
    edit: Edit,
    claimed: HashSet<usize>,
    products: usize,
}

impl Rewrite<'_, '_> {
    /// The weight's Mul and Cast go: the product reads the int8 values itself.
    fn drop_weight(&mut self, w: &Weight) {
        for k in [w.mul_node, w.cast_node] {
            self.edit.drop_node(self.view.graph.position(k));
            self.edit.forget_shapes(self.view.node(k).outputs.iter().cloned());
        }
    }

    /// MatMul node `k`, when its precision is `Int8ButWidest`, split at the
    /// widest channels of the product feeding it (`split_product`).
    fn split_at_widest(&mut self, k: usize, precision: &dyn Fn(u64, u64) -> Precision) {
        let view = self.view;
        let n = view.node(k);
        if !n.is("MatMul", 2) || self.claimed.contains(&k) {
            return;
        }
        let Some(w) = view.weights.get(n.inputs[1].as_str()).filter(|w| w.per_column) else { return };
        let Precision::Int8ButWidest(count) = precision(w.shape.0, w.shape.1) else { return };
        if !view.only_used_by(&n.inputs[1], k) {
            return;
        }
        let Some(feeder) = feeding_weight(view, &n.inputs[0], k, w.shape.0) else { return };
        let up_node = view.node(feeder.product);
        if self.claimed.contains(&feeder.product)
            || feeder.chain.iter().any(|c| self.claimed.contains(c))
            || !view.only_used_by(&up_node.inputs[1], feeder.product)
        {
            return; // part of another split, or its weight read elsewhere
        }
        let up_in_int8 = precision(feeder.weight.shape.0, feeder.weight.shape.1) == Precision::Int8;
        let Some(split) = split_product(view, k, w, &feeder, count, up_in_int8) else { return };
        let graph = view.graph;
        self.edit.replace(graph.position(feeder.product), split.feeder_nodes);
        self.edit.replace(graph.position(k), split.nodes);
        for t in split.added {
            self.edit.add_initializer(t);
        }
        for name in [&w.quantized, &feeder.weight.quantized, &feeder.weight.scale] {
            self.edit.remove_initializer(name);
        }
        for (name, _) in &feeder.per_channel {
            self.edit.remove_initializer(name);
        }
        for &c in &feeder.chain {
            self.edit.drop_node(graph.position(c));
        }
        for &c in feeder.chain.iter().chain([&feeder.product]) {
            self.edit.forget_shapes(view.node(c).outputs.iter().cloned());
        }
        self.drop_weight(w);
        self.drop_weight(feeder.weight);
        // DynamicQuantizeMatMul wants per-column scales as a vector.
        self.edit.reshape_initializer(&w.scale, vec![w.shape.1]);
        self.claimed.extend(feeder.chain.iter().copied().chain([k, feeder.product]));
        self.products += 1 + usize::from(up_in_int8);
    }

    /// `Gather(table, ids)` over an int8 table becomes
    /// `Mul(Cast(Gather(q, ids)), Gather(scale, ids))`, on axis 0 only.
    fn gather(&mut self, k: usize) {
        let view = self.view;
        let n = view.node(k);
        let Some(w) = view.weights.get(n.inputs[0].as_str()).filter(|w| !w.per_column) else { return };
        if !view.only_used_by(&n.inputs[0], k) || n.attributes.iter().any(|(a, v)| a == "axis" && *v != 0) {
            return;
        }
        let (ids, out) = (n.inputs[1].as_str(), n.outputs[0].as_str());
        let (rows, scales, floats) = (format!("{out}_vg_rows"), format!("{out}_vg_scales"), format!("{out}_vg_float"));
        self.edit.replace(
            view.graph.position(k),
            vec![
                encode_node(&rows, "Gather", &[&w.quantized, ids], &[&rows], &[]),
                encode_node(&scales, "Gather", &[&w.scale, ids], &[&scales], &[]),
                encode_node(&floats, "Cast", &[&rows], &[&floats], &[("to", TYPE_FLOAT)]),
                encode_node(&format!("{out}_vg_dequantize"), "Mul", &[&floats, &scales], &[out], &[]),
            ],
        );
        self.drop_weight(w);
    }

    /// `MatMul(X, weight)` becomes `DynamicQuantizeMatMul(X, q, scale)`,
    /// where the weight feeds nothing else and its precision is `Int8`;
    /// with the bias added after it, if any, as its own bias input.
    fn product(&mut self, k: usize, precision: &dyn Fn(u64, u64) -> Precision) -> Result<()> {
        let view = self.view;
        let n = view.node(k);
        if !n.is("MatMul", 2) || self.claimed.contains(&k) {
            return Ok(());
        }
        let Some(w) = view.weights.get(n.inputs[1].as_str()).filter(|w| w.per_column) else { return Ok(()) };
        if !view.only_used_by(&n.inputs[1], k) || precision(w.shape.0, w.shape.1) != Precision::Int8 {
            return Ok(());
        }
        let bias = added_bias(view, &n.outputs[0], w.shape.1).filter(|(add, _)| !self.claimed.contains(add));
        let (output, bias_input) = match &bias {
            Some((add, name)) => {
                self.edit.drop_node(view.graph.position(*add));
                self.edit.forget_shapes([n.outputs[0].clone()]);
                (view.node(*add).outputs[0].as_str(), name.as_str())
            }
            None => (n.outputs[0].as_str(), ""),
        };
        let mut inputs = vec![n.inputs[0].as_str(), w.quantized.as_str(), w.scale.as_str()];
        if bias.is_some() {
            inputs.extend(["", bias_input]);
        }
        let name = node_name(view.graph.encoded(k))?;
        self.edit.replace(
            view.graph.position(k),
            vec![encode_contrib_node(&name, "DynamicQuantizeMatMul", &inputs, &[output])],
        );
        self.products += 1;
        self.drop_weight(w);
        self.edit.reshape_initializer(&w.scale, vec![w.shape.1]);
        Ok(())
    }
}

/// The bias added to a product's output `out` (with `channels` columns):
/// the node of `Add(out, bias)` and the bias's name, when that Add is the
/// only reader of `out` and the bias a float vector of one value per
/// column, as `DynamicQuantizeMatMul`'s bias input takes it.
fn added_bias(view: &View<'_>, out: &str, channels: u64) -> Option<(usize, String)> {
    let &[add] = view.users.get(out)?.as_slice() else { return None };
    let n = view.node(add);
    if !n.is("Add", 2) {
        return None;
    }
    let bias = if n.inputs[0] == out { &n.inputs[1] } else { &n.inputs[0] };
    let t = view.initializers.get(bias.as_str())?;
    (t.data_type == TYPE_FLOAT && t.dims == [channels] && bias != out).then(|| (add, bias.clone()))
}

/// The `i`th fp32 value of a float vector stored as `raw`.
fn float_at(raw: &[u8], i: usize) -> f32 {
    f32::from_le_bytes([raw[4 * i], raw[4 * i + 1], raw[4 * i + 2], raw[4 * i + 3]])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node_bytes(op: &str, inputs: &[&str], outputs: &[&str]) -> Vec<u8> {
        let mut n = Vec::new();
        for i in inputs {
            write_bytes(&mut n, NODE_INPUT, i.as_bytes());
        }
        for o in outputs {
            write_bytes(&mut n, NODE_OUTPUT, o.as_bytes());
        }
        write_bytes(&mut n, NODE_NAME, format!("{op}_{}", outputs[0]).as_bytes());
        write_bytes(&mut n, NODE_OP_TYPE, op.as_bytes());
        n
    }

    fn tensor_bytes(name: &str, data_type: u64, dims: &[u64]) -> Vec<u8> {
        let mut t = Vec::new();
        for d in dims {
            write_field(&mut t, TENSOR_DIMS, WIRE_VARINT, &{
                let mut v = Vec::new();
                write_varint(&mut v, *d);
                v
            });
        }
        write_field(&mut t, TENSOR_DATA_TYPE, WIRE_VARINT, &[data_type as u8]);
        write_bytes(&mut t, TENSOR_NAME, name.as_bytes());
        write_bytes(&mut t, 9, &[0u8; 4]); // raw_data, content irrelevant here
        t
    }

    /// x -> MatMul(x, w1) -> MatMul(., w2), each weight Mul(Cast(q), s); w2 is 8 rows.
    fn model() -> Vec<u8> {
        let mut g = Vec::new();
        for (q, s, w, rows) in [("q1", "s1", "w1", 4), ("q2", "s2", "w2", 8)] {
            write_bytes(&mut g, GRAPH_INITIALIZER, &tensor_bytes(q, TYPE_INT8, &[rows, 4]));
            write_bytes(&mut g, GRAPH_INITIALIZER, &tensor_bytes(s, TYPE_FLOAT, &[1, 4]));
            write_bytes(&mut g, GRAPH_NODE, &node_bytes("Cast", &[q], &[&format!("{q}_f")]));
            write_bytes(&mut g, GRAPH_NODE, &node_bytes("Mul", &[&format!("{q}_f"), s], &[w]));
        }
        write_bytes(&mut g, GRAPH_NODE, &node_bytes("MatMul", &["x", "w1"], &["h"]));
        write_bytes(&mut g, GRAPH_NODE, &node_bytes("MatMul", &["h", "w2"], &["y"]));
        let mut vi = Vec::new();
        write_bytes(&mut vi, VALUE_INFO_NAME, b"w1");
        write_bytes(&mut g, GRAPH_VALUE_INFO, &vi);
        let mut m = Vec::new();
        write_field(&mut m, 1, WIRE_VARINT, &[10]); // ir_version
        write_bytes(&mut m, MODEL_GRAPH, &g);
        m
    }

    fn ops(model: &[u8]) -> Vec<(String, Vec<String>)> {
        let top = parse(model).unwrap();
        let g = top.iter().find(|f| f.num == MODEL_GRAPH).unwrap();
        parse(g.data)
            .unwrap()
            .iter()
            .filter(|f| f.num == GRAPH_NODE)
            .map(|f| node(f.data).unwrap())
            .map(|n| (n.op_type, n.inputs))
            .collect()
    }

    #[test]
    fn weight_only_int8_products_become_dynamic_quantize_matmul() {
        let (out, n) = rewrite(&model(), &|_, _| Precision::Int8).unwrap();
        assert_eq!(n, 2);
        assert_eq!(
            ops(&out),
            vec![
                ("DynamicQuantizeMatMul".to_string(), vec!["x".to_string(), "q1".into(), "s1".into()]),
                ("DynamicQuantizeMatMul".to_string(), vec!["h".to_string(), "q2".into(), "s2".into()]),
            ]
        );
        let top = parse(&out).unwrap();
        let graph = parse(top.iter().find(|f| f.num == MODEL_GRAPH).unwrap().data).unwrap();
        let s1 = graph
            .iter()
            .filter(|f| f.num == GRAPH_INITIALIZER)
            .map(|f| tensor(f.data).unwrap())
            .find(|t| t.name == "s1")
            .unwrap();
        assert_eq!(s1.dims, vec![4], "scales become a vector");
        assert!(!graph.iter().any(|f| f.num == GRAPH_VALUE_INFO), "the shape of a removed tensor is dropped");
        assert!(top.iter().any(|f| f.num == MODEL_OPSET_IMPORT), "the contrib domain is imported");
        assert_eq!(top[0], Field { num: 1, wire: WIRE_VARINT, data: &[10] }, "other fields are kept");
    }

    #[test]
    fn weights_can_be_kept_in_fp32_and_nothing_to_do_changes_nothing() {
        let (out, n) = rewrite(&model(), &|rows, _| if rows == 8 { Precision::Fp32 } else { Precision::Int8 }).unwrap();
        assert_eq!(n, 1);
        let kinds: Vec<String> = ops(&out).into_iter().map(|o| o.0).collect();
        assert_eq!(kinds, ["Cast", "Mul", "DynamicQuantizeMatMul", "MatMul"]);
        let (again, n) = rewrite(&out, &|rows, _| if rows == 8 { Precision::Fp32 } else { Precision::Int8 }).unwrap();
        assert_eq!((n, again == out), (0, true));
    }

    #[test]
    fn embedding_tables_are_gathered_before_they_are_dequantized() {
        let mut g = Vec::new();
        write_bytes(&mut g, GRAPH_INITIALIZER, &tensor_bytes("table_q", TYPE_INT8, &[100, 4]));
        write_bytes(&mut g, GRAPH_INITIALIZER, &tensor_bytes("table_s", TYPE_FLOAT, &[100, 1]));
        write_bytes(&mut g, GRAPH_NODE, &node_bytes("Cast", &["table_q"], &["table_f"]));
        write_bytes(&mut g, GRAPH_NODE, &node_bytes("Mul", &["table_f", "table_s"], &["table"]));
        write_bytes(&mut g, GRAPH_NODE, &node_bytes("Gather", &["table", "ids"], &["e"]));
        let mut m = Vec::new();
        write_bytes(&mut m, MODEL_GRAPH, &g);
        let (out, products) = rewrite(&m, &|_, _| Precision::Int8).unwrap();
        assert_eq!(products, 0);
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(
            ops(&out),
            vec![
                ("Gather".to_string(), s(&["table_q", "ids"])),
                ("Gather".to_string(), s(&["table_s", "ids"])),
                ("Cast".to_string(), s(&["e_vg_rows"])),
                ("Mul".to_string(), s(&["e_vg_float", "e_vg_scales"])),
            ]
        );
        let top = parse(&out).unwrap();
        let graph = parse(top.iter().find(|f| f.num == MODEL_GRAPH).unwrap().data).unwrap();
        let cast = graph
            .iter()
            .filter(|f| f.num == GRAPH_NODE)
            .map(|f| node(f.data).unwrap())
            .find(|n| n.op_type == "Cast")
            .unwrap();
        assert_eq!(cast.attributes, vec![("to".to_string(), TYPE_FLOAT as i64)]);
        assert_eq!(cast.outputs, vec!["e_vg_float"]);
    }

    /// x -> MatMul(x, up) -> Add(., bias) -> Gelu -> MatMul(., down) -> y,
    /// with real values: `up` is 2x4 and its column 2 holds its largest
    /// entry; `down` is 4x2.
    fn feed_forward_model() -> Vec<u8> {
        feed_forward_model_with(&[])
    }

    /// `feed_forward_model` with more nodes (op, inputs, outputs) at its end.
    fn feed_forward_model_with(more: &[(&str, &[&str], &[&str])]) -> Vec<u8> {
        let floats = |v: &[f32]| v.iter().flat_map(|f| f.to_le_bytes()).collect::<Vec<u8>>();
        let ints = |v: &[i8]| v.iter().map(|&i| i as u8).collect::<Vec<u8>>();
        let mut g = Vec::new();
        for (q, s, w, dims, values, scales) in [
            ("up_q", "up_s", "up", [2, 4], ints(&[1, -2, 3, 4, 5, 6, -100, 8]), floats(&[1.0, 1.5, 1.0, 2.0])),
            ("down_q", "down_s", "down", [4, 2], ints(&[1, 2, 3, 4, 5, -6, 7, 8]), floats(&[0.5, 0.25])),
        ] {
            write_bytes(&mut g, GRAPH_INITIALIZER, &encode_tensor(q, TYPE_INT8, &dims, &values));
            write_bytes(&mut g, GRAPH_INITIALIZER, &encode_tensor(s, TYPE_FLOAT, &[1, dims[1]], &scales));
            write_bytes(&mut g, GRAPH_NODE, &node_bytes("Cast", &[q], &[&format!("{q}_f")]));
            write_bytes(&mut g, GRAPH_NODE, &node_bytes("Mul", &[&format!("{q}_f"), s], &[w]));
        }
        write_bytes(
            &mut g,
            GRAPH_INITIALIZER,
            &encode_tensor("bias", TYPE_FLOAT, &[4], &floats(&[0.1, 0.2, 0.3, 0.4])),
        );
        write_bytes(&mut g, GRAPH_NODE, &node_bytes("MatMul", &["x", "up"], &["h0"]));
        write_bytes(&mut g, GRAPH_NODE, &node_bytes("Add", &["h0", "bias"], &["h"]));
        write_bytes(&mut g, GRAPH_NODE, &node_bytes("Gelu", &["h"], &["a"]));
        write_bytes(&mut g, GRAPH_NODE, &node_bytes("MatMul", &["a", "down"], &["y"]));
        for (op, inputs, outputs) in more {
            write_bytes(&mut g, GRAPH_NODE, &node_bytes(op, inputs, outputs));
        }
        let mut m = Vec::new();
        write_bytes(&mut m, MODEL_GRAPH, &g);
        m
    }

    fn initializer_values(model: &[u8], name: &str) -> Option<(Vec<u64>, Vec<u8>)> {
        let top = parse(model).unwrap();
        let graph = parse(top.iter().find(|f| f.num == MODEL_GRAPH).unwrap().data).unwrap();
        let f = graph.iter().filter(|f| f.num == GRAPH_INITIALIZER).find(|f| tensor(f.data).unwrap().name == name)?;
        Some((tensor(f.data).unwrap().dims, raw_data(f.data).unwrap().to_vec()))
    }

    #[test]
    fn the_widest_channels_of_a_feed_forward_output_stay_in_fp32() {
        let policy = |rows: u64, _| if rows == 4 { Precision::Int8ButWidest(1) } else { Precision::Int8 };
        let (out, n) = rewrite(&feed_forward_model(), &policy).unwrap();
        assert_eq!(n, 2);
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        // The input projection, its bias and GELU are computed once for the
        // wide channel and once for the others; the bias is the products'.
        assert_eq!(
            ops(&out),
            vec![
                (
                    "DynamicQuantizeMatMul".to_string(),
                    s(&["x", "h0_weight_vg_wide", "h0_scale_vg_wide", "", "bias_vg_wide"])
                ),
                ("Gelu".to_string(), s(&["h_vg_wide"])),
                (
                    "DynamicQuantizeMatMul".to_string(),
                    s(&["x", "h0_weight_vg_narrow", "h0_scale_vg_narrow", "", "bias_vg_narrow"])
                ),
                ("Gelu".to_string(), s(&["h_vg_narrow"])),
                ("MatMul".to_string(), s(&["a_vg_wide", "y_vg_wide_weight"])),
                ("DynamicQuantizeMatMul".to_string(), s(&["a_vg_narrow", "y_vg_narrow_weight", "down_s"])),
                ("Add".to_string(), s(&["y_vg_narrow", "y_vg_wide"])),
            ]
        );
        let floats = |raw: Vec<u8>| {
            raw.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect::<Vec<_>>()
        };
        let ints = |raw: Vec<u8>| raw.into_iter().map(|b| b as i8).collect::<Vec<_>>();
        let get = |name: &str| initializer_values(&out, name).unwrap();
        // Widths of up's columns: 5, 9, 100 and 16, so channel 2 is the
        // wide one: up's column 2, its scale and bias go to the wide part,
        // and down's row 2 is kept in fp32.
        assert_eq!(get("h0_weight_vg_wide").0, [2, 1]);
        assert_eq!(ints(get("h0_weight_vg_wide").1), [3, -100]);
        assert_eq!(get("h0_weight_vg_narrow").0, [2, 3]);
        assert_eq!(ints(get("h0_weight_vg_narrow").1), [1, -2, 4, 5, 6, 8]);
        assert_eq!(get("h0_scale_vg_wide"), (vec![1], floats_bytes(&[1.0])));
        assert_eq!(get("h0_scale_vg_narrow"), (vec![3], floats_bytes(&[1.0, 1.5, 2.0])));
        assert_eq!(get("bias_vg_wide"), (vec![1], floats_bytes(&[0.3])));
        assert_eq!(get("bias_vg_narrow"), (vec![3], floats_bytes(&[0.1, 0.2, 0.4])));
        assert_eq!(get("y_vg_wide_weight").0, [1, 2]);
        assert_eq!(floats(get("y_vg_wide_weight").1), [5.0 * 0.5, -6.0 * 0.25]);
        assert_eq!(get("y_vg_narrow_weight").0, [3, 2]);
        assert_eq!(ints(get("y_vg_narrow_weight").1), [1, 2, 3, 4, 7, 8]);
        assert_eq!(get("down_s").0, [2]);
        for gone in ["up_q", "up_s", "bias", "down_q"] {
            assert!(initializer_values(&out, gone).is_none(), "{gone} is replaced by its parts");
        }
    }

    fn floats_bytes(v: &[f32]) -> Vec<u8> {
        v.iter().flat_map(|f| f.to_le_bytes()).collect()
    }

    #[test]
    fn a_bias_after_an_int8_product_becomes_its_bias_input() {
        let (out, n) = rewrite(&feed_forward_model(), &|_, _| Precision::Int8).unwrap();
        assert_eq!(n, 2);
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(
            ops(&out),
            vec![
                ("DynamicQuantizeMatMul".to_string(), s(&["x", "up_q", "up_s", "", "bias"])),
                ("Gelu".to_string(), s(&["h"])),
                ("DynamicQuantizeMatMul".to_string(), s(&["a", "down_q", "down_s"])),
            ]
        );
        // Not when something else reads the product without the bias.
        let (out, _) =
            rewrite(&feed_forward_model_with(&[("Relu", &["h0"], &["r"])]), &|_, _| Precision::Int8).unwrap();
        let kinds: Vec<String> = ops(&out).into_iter().map(|o| o.0).collect();
        assert_eq!(kinds, ["DynamicQuantizeMatMul", "Add", "Gelu", "DynamicQuantizeMatMul", "Relu"]);
    }

    #[test]
    fn channels_read_elsewhere_are_not_split() {
        // Another node reads the biased projection: it needs all of its
        // channels in one tensor, so `down` stays in fp32.
        let policy = |rows: u64, _| if rows == 4 { Precision::Int8ButWidest(1) } else { Precision::Int8 };
        let (out, n) = rewrite(&feed_forward_model_with(&[("Relu", &["h"], &["r"])]), &policy).unwrap();
        assert_eq!(n, 1);
        let kinds: Vec<String> = ops(&out).into_iter().map(|o| o.0).collect();
        assert_eq!(kinds, ["Cast", "Mul", "DynamicQuantizeMatMul", "Gelu", "MatMul", "Relu"]);
        assert_eq!(initializer_values(&out, "bias").unwrap().1, floats_bytes(&[0.1, 0.2, 0.3, 0.4]), "whole");
    }

    #[test]
    fn a_feeding_product_kept_in_fp32_is_split_in_fp32() {
        // `up` reads the graph's input directly: nothing says which of its
        // input channels are wide, so it is not in int8; its parts are
        // products in fp32 with the bias added after them.
        let (out, n) = rewrite(&feed_forward_model(), &|_, _| Precision::Int8ButWidest(1)).unwrap();
        assert_eq!(n, 1);
        let kinds: Vec<String> = ops(&out).into_iter().map(|o| o.0).collect();
        assert_eq!(kinds, ["MatMul", "Add", "Gelu", "MatMul", "Add", "Gelu", "MatMul", "DynamicQuantizeMatMul", "Add"]);
        let get = |name: &str| initializer_values(&out, name).unwrap();
        assert_eq!(get("h0_weight_vg_wide"), (vec![2, 1], floats_bytes(&[3.0, -100.0])));
        assert_eq!(get("h0_weight_vg_narrow"), (vec![2, 3], floats_bytes(&[1.0, -3.0, 8.0, 5.0, 9.0, 16.0])));
    }

    #[test]
    fn malformed_input_is_an_error_not_a_panic() {
        assert!(rewrite(&[0x3a, 0xff, 0xff], &|_, _| Precision::Int8).is_err());
        assert!(rewrite(&[0xff; 12], &|_, _| Precision::Int8).is_err());
        assert!(rewrite(b"", &|_, _| Precision::Int8).is_err());
    }

    mod fuzz {
        //! The model rewrite reads bytes it did not write: anything is a
        //! model or an error, never a panic.
        use super::super::*;
        use proptest::prelude::*;

        proptest! {
            #[test]
            fn any_bytes_are_rewritten_or_refused(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
                let _ = rewrite(&bytes, &|_, _| Precision::Int8);
            }

            #[test]
            fn a_model_with_damaged_bytes_is_rewritten_or_refused(at in 0usize..400, byte in any::<u8>()) {
                let mut m = super::model();
                let i = at % m.len();
                m[i] = byte;
                let _ = rewrite(&m, &|_, _| Precision::Int8);
            }

            #[test]
            fn a_feed_forward_model_with_damaged_bytes_is_split_or_refused(at in 0usize..1000, byte in any::<u8>(), wide in 0usize..6) {
                let mut m = super::feed_forward_model();
                let i = at % m.len();
                m[i] = byte;
                let _ = rewrite(&m, &|_, _| Precision::Int8ButWidest(wide));
            }
        }
    }
}
