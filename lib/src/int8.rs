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
//! in fp32 is the caller's choice (`embed::model_bytes`), made on
//! `bench/eval.sh`.
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

use crate::onnx::*;

/// Changes whenever the rewrite does, so that caches of its output are rebuilt.
pub const VERSION: u32 = 2;

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

/// Rewrite `model` (the bytes of an ONNX file). `keep_fp32(rows, columns)`
/// names weights to leave in fp32. Returns the new model and how many
/// products it now computes in int8; a model with none to rewrite comes back
/// unchanged with a count of 0.
pub fn rewrite(model: &[u8], keep_fp32: &dyn Fn(u64, u64) -> bool) -> Result<(Vec<u8>, usize)> {
    let top = parse(model)?;
    let graph_bytes = graph_of(&top)?;
    let graph = parse(graph_bytes)?;

    let mut initializers: HashMap<String, Tensor> = HashMap::new();
    let mut nodes: Vec<(usize, Node)> = Vec::new();
    for (i, f) in graph.iter().enumerate() {
        match f.num {
            GRAPH_INITIALIZER => {
                let t = tensor(f.data)?;
                initializers.insert(t.name.clone(), t);
            }
            GRAPH_NODE => nodes.push((i, node(f.data)?)),
            _ => {}
        }
    }
    let mut users: HashMap<&str, Vec<usize>> = HashMap::new();
    for (k, (_, n)) in nodes.iter().enumerate() {
        for input in &n.inputs {
            users.entry(input.as_str()).or_default().push(k);
        }
    }
    let only_used_by = |name: &str, k: usize| users.get(name).is_some_and(|u| u.len() == 1 && u[0] == k);

    // Weights: Mul(Cast(int8 [rows, cols]), float [1, cols] or [rows, 1]), each part used once.
    let mut cast_of: HashMap<&str, usize> = HashMap::new();
    for (k, (_, n)) in nodes.iter().enumerate() {
        let is_int8_matrix = |name: &str| initializers.get(name).is_some_and(|t| t.data_type == TYPE_INT8 && t.dims.len() == 2);
        if n.op_type == "Cast" && n.domain.is_empty() && n.inputs.len() == 1 && n.outputs.len() == 1 && is_int8_matrix(&n.inputs[0]) {
            cast_of.insert(n.outputs[0].as_str(), k);
        }
    }
    let mut weights: HashMap<&str, Weight> = HashMap::new();
    for (k, (_, n)) in nodes.iter().enumerate() {
        if n.op_type != "Mul" || !n.domain.is_empty() || n.inputs.len() != 2 || n.outputs.len() != 1 {
            continue;
        }
        let Some(&cast_node) = cast_of.get(n.inputs[0].as_str()) else { continue };
        let quantized = &nodes[cast_node].1.inputs[0];
        let (Some(q), Some(s)) = (initializers.get(quantized), initializers.get(&n.inputs[1])) else { continue };
        let per_column = s.data_type == TYPE_FLOAT && s.dims.len() == 2 && s.dims[0] == 1 && s.dims[1] == q.dims[1];
        let per_row = s.data_type == TYPE_FLOAT && s.dims.len() == 2 && s.dims[1] == 1 && s.dims[0] == q.dims[0];
        if !(per_column || per_row) || !only_used_by(&n.inputs[0], k) || !only_used_by(&n.inputs[1], k) {
            continue;
        }
        weights.insert(
            n.outputs[0].as_str(),
            Weight {
                mul_node: k,
                cast_node,
                quantized: quantized.clone(),
                scale: n.inputs[1].clone(),
                shape: (q.dims[0], q.dims[1]),
                per_column,
            },
        );
    }

    // MatMul(X, weight) -> DynamicQuantizeMatMul(X, q, scale), where the weight feeds nothing else.
    let mut replaced: HashMap<usize, Vec<u8>> = HashMap::new();
    let mut dropped: HashSet<usize> = HashSet::new();
    let mut reshaped: HashMap<String, Vec<u64>> = HashMap::new();
    let mut gathers: HashMap<usize, Vec<Vec<u8>>> = HashMap::new();
    for (k, (i, n)) in nodes.iter().enumerate() {
        if n.op_type == "Gather" && n.domain.is_empty() && n.inputs.len() == 2 && n.outputs.len() == 1 {
            // Gather(table, ids) -> Mul(Cast(Gather(q, ids)), Gather(scale, ids)), on axis 0 only.
            let Some(w) = weights.get(n.inputs[0].as_str()).filter(|w| !w.per_column) else { continue };
            if !only_used_by(&n.inputs[0], k) || n.attributes.iter().any(|(a, v)| a == "axis" && *v != 0) {
                continue;
            }
            let (ids, out) = (n.inputs[1].as_str(), n.outputs[0].as_str());
            let (rows, scales, floats) = (format!("{out}_vg_rows"), format!("{out}_vg_scales"), format!("{out}_vg_float"));
            gathers.insert(
                *i,
                vec![
                    encode_node(&rows, "Gather", &[&w.quantized, ids], &[&rows], &[]),
                    encode_node(&scales, "Gather", &[&w.scale, ids], &[&scales], &[]),
                    encode_node(&floats, "Cast", &[&rows], &[&floats], &[("to", TYPE_FLOAT)]),
                    encode_node(&format!("{out}_vg_dequantize"), "Mul", &[&floats, &scales], &[out], &[]),
                ],
            );
            dropped.insert(nodes[w.mul_node].0);
            dropped.insert(nodes[w.cast_node].0);
            continue;
        }
        if n.op_type != "MatMul" || !n.domain.is_empty() || n.inputs.len() != 2 || n.outputs.len() != 1 {
            continue;
        }
        let Some(w) = weights.get(n.inputs[1].as_str()).filter(|w| w.per_column) else { continue };
        if !only_used_by(&n.inputs[1], k) || keep_fp32(w.shape.0, w.shape.1) {
            continue;
        }
        let mut encoded = Vec::new();
        for input in [&n.inputs[0], &w.quantized, &w.scale] {
            write_bytes(&mut encoded, NODE_INPUT, input.as_bytes());
        }
        write_bytes(&mut encoded, NODE_OUTPUT, n.outputs[0].as_bytes());
        for f in parse(graph[*i].data)? {
            if f.num == NODE_NAME {
                write_bytes(&mut encoded, NODE_NAME, f.data);
            }
        }
        write_bytes(&mut encoded, NODE_OP_TYPE, b"DynamicQuantizeMatMul");
        write_bytes(&mut encoded, NODE_DOMAIN, b"com.microsoft");
        replaced.insert(*i, encoded);
        dropped.insert(nodes[w.mul_node].0);
        dropped.insert(nodes[w.cast_node].0);
        // DynamicQuantizeMatMul wants per-column scales as a vector.
        reshaped.insert(w.scale.clone(), vec![w.shape.1]);
    }
    if replaced.is_empty() && gathers.is_empty() {
        return Ok((model.to_vec(), 0));
    }
    let gone: HashSet<&str> =
        dropped.iter().filter_map(|i| nodes.iter().find(|(j, _)| j == i)).flat_map(|(_, n)| n.outputs.iter().map(String::as_str)).collect();

    let mut new_graph = Vec::with_capacity(graph_bytes.len());
    for (i, f) in graph.iter().enumerate() {
        if dropped.contains(&i) {
            continue;
        }
        if let Some(encoded) = replaced.get(&i) {
            write_bytes(&mut new_graph, GRAPH_NODE, encoded);
            continue;
        }
        if let Some(encoded) = gathers.get(&i) {
            for n in encoded {
                write_bytes(&mut new_graph, GRAPH_NODE, n);
            }
            continue;
        }
        if f.num == GRAPH_INITIALIZER {
            let t = tensor(f.data)?;
            if let Some(dims) = reshaped.get(&t.name) {
                write_bytes(&mut new_graph, GRAPH_INITIALIZER, &reshape_tensor(f.data, dims)?);
                continue;
            }
        }
        if f.num == GRAPH_VALUE_INFO {
            // Shapes recorded for tensors that no longer exist, or changed shape.
            let name = parse(f.data)?.into_iter().find(|g| g.num == VALUE_INFO_NAME).map(|g| text(g.data)).transpose()?;
            if name.is_some_and(|n| gone.contains(n.as_str()) || reshaped.contains_key(&n)) {
                continue;
            }
        }
        write_field(&mut new_graph, f.num, f.wire, f.data);
    }

    let out = with_graph(&top, &new_graph)?;
    Ok((out, replaced.len()))
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
        write_bytes(&mut t, 9, &vec![0u8; 4]); // raw_data, content irrelevant here
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
        parse(g.data).unwrap().iter().filter(|f| f.num == GRAPH_NODE).map(|f| node(f.data).unwrap()).map(|n| (n.op_type, n.inputs)).collect()
    }

    #[test]
    fn weight_only_int8_products_become_dynamic_quantize_matmul() {
        let (out, n) = rewrite(&model(), &|_, _| false).unwrap();
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
        let s1 = graph.iter().filter(|f| f.num == GRAPH_INITIALIZER).map(|f| tensor(f.data).unwrap()).find(|t| t.name == "s1").unwrap();
        assert_eq!(s1.dims, vec![4], "scales become a vector");
        assert!(!graph.iter().any(|f| f.num == GRAPH_VALUE_INFO), "the shape of a removed tensor is dropped");
        assert!(top.iter().any(|f| f.num == MODEL_OPSET_IMPORT), "the contrib domain is imported");
        assert_eq!(top[0], Field { num: 1, wire: WIRE_VARINT, data: &[10] }, "other fields are kept");
    }

    #[test]
    fn weights_can_be_kept_in_fp32_and_nothing_to_do_changes_nothing() {
        let (out, n) = rewrite(&model(), &|rows, _| rows == 8).unwrap();
        assert_eq!(n, 1);
        let kinds: Vec<String> = ops(&out).into_iter().map(|o| o.0).collect();
        assert_eq!(kinds, ["Cast", "Mul", "DynamicQuantizeMatMul", "MatMul"]);
        let (again, n) = rewrite(&out, &|rows, _| rows == 8).unwrap();
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
        let (out, products) = rewrite(&m, &|_, _| false).unwrap();
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
        let cast = graph.iter().filter(|f| f.num == GRAPH_NODE).map(|f| node(f.data).unwrap()).find(|n| n.op_type == "Cast").unwrap();
        assert_eq!(cast.attributes, vec![("to".to_string(), TYPE_FLOAT as i64)]);
        assert_eq!(cast.outputs, vec!["e_vg_float"]);
    }

    #[test]
    fn malformed_input_is_an_error_not_a_panic() {
        assert!(rewrite(&[0x3a, 0xff, 0xff], &|_, _| false).is_err());
        assert!(rewrite(&[0xff; 12], &|_, _| false).is_err());
        assert!(rewrite(b"", &|_, _| false).is_err());
    }

    mod fuzz {
        //! The model rewrite reads bytes it did not write: anything is a
        //! model or an error, never a panic.
        use super::super::*;
        use proptest::prelude::*;

        proptest! {
            #[test]
            fn any_bytes_are_rewritten_or_refused(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
                let _ = rewrite(&bytes, &|_, _| false);
            }

            #[test]
            fn a_model_with_damaged_bytes_is_rewritten_or_refused(at in 0usize..400, byte in any::<u8>()) {
                let mut m = super::model();
                let i = at % m.len();
                m[i] = byte;
                let _ = rewrite(&m, &|_, _| false);
            }
        }
    }
}
