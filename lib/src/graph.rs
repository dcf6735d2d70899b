//! Simplify the embedding model's graph where ONNX Runtime leaves work
//! undone, for a model that is given one text per run.
//!
//! The export we ship spells out two things ONNX Runtime does not fuse:
//!
//! - **Attention masking.** Each layer adds a bias made from
//!   `attention_mask` to its attention scores and, after the softmax, turns
//!   NaNs (rows that were masked whole) into zeros: `Softmax(Add(s, bias))`
//!   then `Where(IsNaN(p), 0, p)`. Both work on every layer's
//!   heads × tokens × tokens scores. A text embedded on its own has no
//!   padding, so its mask is all ones, the bias is all zeros and no row is
//!   masked: both steps are identities and are removed. **The simplified
//!   model is wrong for padded batches**; `embed::LocalEmbedder` runs one
//!   text per run for that reason.
//! - **GELU.** `x * 0.5 * (1 + erf(x / sqrt 2))` as five operators becomes
//!   ONNX Runtime's `Gelu`, the same function in one pass, which ONNX
//!   Runtime then fuses with the bias before it.
//!
//! Measured on tokio's chunks (lib/examples/embed_speed.rs), these steps took
//! about a sixth of the model's time.

use anyhow::Result;
use std::collections::{HashMap, HashSet};

use crate::onnx::*;

/// Changes whenever the simplification does, so that caches of its output are rebuilt.
pub const VERSION: u32 = 1;

/// What `simplify` changed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Simplified {
    /// Attention layers whose mask bias and NaN guard were removed.
    pub masks: usize,
    /// GELUs written as one operator.
    pub gelus: usize,
}

/// Simplify `model` (the bytes of an ONNX file) for single-text runs. A
/// model with nothing to simplify comes back unchanged.
pub fn simplify(model: &[u8]) -> Result<(Vec<u8>, Simplified)> {
    let top = parse(model)?;
    let graph_bytes = graph_of(&top)?;
    let graph = parse(graph_bytes)?;

    let mut scalars: HashMap<String, f32> = HashMap::new();
    let mut nodes: Vec<(usize, Node)> = Vec::new();
    for (i, f) in graph.iter().enumerate() {
        match f.num {
            GRAPH_INITIALIZER => {
                if let Some(v) = scalar_float(f.data) {
                    scalars.insert(tensor(f.data)?.name, v);
                }
            }
            GRAPH_NODE => nodes.push((i, node(f.data)?)),
            _ => {}
        }
    }
    let mut producer: HashMap<&str, usize> = HashMap::new();
    let mut users: HashMap<&str, Vec<usize>> = HashMap::new();
    for (k, (_, n)) in nodes.iter().enumerate() {
        for output in &n.outputs {
            producer.insert(output.as_str(), k);
        }
        for input in &n.inputs {
            users.entry(input.as_str()).or_default().push(k);
        }
    }
    let op = |k: usize, op_type: &str, arity: usize| {
        let n = &nodes[k].1;
        n.op_type == op_type && n.domain.is_empty() && n.inputs.len() == arity && n.outputs.len() == 1
    };
    let only_user = |name: &str| users.get(name).and_then(|u| (u.len() == 1).then(|| u[0]));
    let is_scalar = |name: &str, value: f32| scalars.get(name).is_some_and(|v| (v - value).abs() <= 1e-6 * value.abs().max(1.0));
    // The input of a two-input node other than `name`, when `name` is one of them.
    let other_input = |k: usize, name: &str| -> Option<String> {
        let i = &nodes[k].1.inputs;
        if i[0] == name {
            Some(i[1].clone())
        } else if i[1] == name {
            Some(i[0].clone())
        } else {
            None
        }
    };

    // Node (by graph position) -> what replaces it; nodes dropped outright.
    let mut replaced: HashMap<usize, Vec<u8>> = HashMap::new();
    let mut dropped: HashSet<usize> = HashSet::new();
    let mut done = Simplified::default();
    let identity = |from: &str, to: &str| encode_node(&format!("{to}_vg_identity"), "Identity", &[from], &[to], &[]);

    for (k, (_, n)) in nodes.iter().enumerate() {
        if !op(k, "Softmax", 1) {
            continue;
        }
        let scores = n.inputs[0].as_str();
        let probabilities = n.outputs[0].as_str();
        // Softmax(Add(s, bias)) with the bias made by a Where: Softmax(s).
        let Some(add) = producer.get(scores).copied().filter(|&a| op(a, "Add", 2) && only_user(scores) == Some(k)) else {
            continue;
        };
        let add_inputs = &nodes[add].1.inputs;
        let made_by_where = |name: &str| producer.get(name).is_some_and(|&p| op(p, "Where", 3));
        let raw = match (made_by_where(&add_inputs[0]), made_by_where(&add_inputs[1])) {
            (false, true) => add_inputs[0].as_str(),
            (true, false) => add_inputs[1].as_str(),
            _ => continue,
        };
        // Where(IsNaN(p), 0, p) after it: p.
        let guard = users.get(probabilities).and_then(|u| match u.as_slice() {
            [a, b] => [(*a, *b), (*b, *a)].into_iter().find(|&(is_nan, w)| {
                op(is_nan, "IsNaN", 1)
                    && op(w, "Where", 3)
                    && nodes[w].1.inputs[0] == nodes[is_nan].1.outputs[0]
                    && is_scalar(&nodes[w].1.inputs[1], 0.0)
                    && nodes[w].1.inputs[2] == probabilities
                    && only_user(&nodes[is_nan].1.outputs[0]) == Some(w)
            }),
            _ => None,
        });
        let Some((is_nan, guard)) = guard else { continue };
        replaced.insert(nodes[add].0, identity(raw, scores));
        replaced.insert(nodes[guard].0, identity(probabilities, &nodes[guard].1.outputs[0]));
        dropped.insert(nodes[is_nan].0);
        done.masks += 1;
    }

    for (k, (_, n)) in nodes.iter().enumerate() {
        // Div(x, sqrt 2) -> Erf -> Add(., 1) -> Mul(., 0.5) -> Mul(x, .), the two Muls in either order.
        if !op(k, "Erf", 1) {
            continue;
        }
        let Some(div) = producer.get(n.inputs[0].as_str()).copied().filter(|&d| op(d, "Div", 2)) else { continue };
        let x = nodes[div].1.inputs[0].as_str();
        if !is_scalar(&nodes[div].1.inputs[1], std::f32::consts::SQRT_2) || only_user(&n.inputs[0]) != Some(k) {
            continue;
        }
        let Some(add) = only_user(&n.outputs[0]).filter(|&a| op(a, "Add", 2)) else { continue };
        if !other_input(add, &n.outputs[0]).is_some_and(|one| is_scalar(&one, 1.0)) {
            continue;
        }
        let Some(first) = only_user(&nodes[add].1.outputs[0]).filter(|&m| op(m, "Mul", 2)) else { continue };
        let Some(second) = only_user(&nodes[first].1.outputs[0]).filter(|&m| op(m, "Mul", 2)) else { continue };
        let (first_other, second_other) = (
            other_input(first, &nodes[add].1.outputs[0]).unwrap_or_default(),
            other_input(second, &nodes[first].1.outputs[0]).unwrap_or_default(),
        );
        let halves_then_x = is_scalar(&first_other, 0.5) && second_other == x;
        let x_then_halves = first_other == x && is_scalar(&second_other, 0.5);
        if !(halves_then_x || x_then_halves) {
            continue;
        }
        let out = nodes[second].1.outputs[0].as_str();
        replaced.insert(nodes[second].0, encode_contrib_node(&format!("{out}_vg_gelu"), "Gelu", &[x], &[out]));
        for gone in [div, k, add, first] {
            dropped.insert(nodes[gone].0);
        }
        done.gelus += 1;
    }

    if replaced.is_empty() {
        return Ok((model.to_vec(), done));
    }
    let mut new_graph = Vec::with_capacity(graph_bytes.len());
    for (i, f) in graph.iter().enumerate() {
        if dropped.contains(&i) {
            continue;
        }
        match replaced.get(&i) {
            Some(encoded) => write_bytes(&mut new_graph, GRAPH_NODE, encoded),
            None => write_field(&mut new_graph, f.num, f.wire, f.data),
        }
    }
    Ok((with_graph(&top, &new_graph)?, done))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scalar(name: &str, value: f32) -> Vec<u8> {
        let mut t = Vec::new();
        write_field(&mut t, TENSOR_DATA_TYPE, WIRE_VARINT, &[TYPE_FLOAT as u8]);
        write_bytes(&mut t, TENSOR_NAME, name.as_bytes());
        write_bytes(&mut t, TENSOR_RAW_DATA, &value.to_le_bytes());
        t
    }

    fn model(nodes: &[(&str, &[&str], &[&str])], scalars: &[(&str, f32)]) -> Vec<u8> {
        let mut g = Vec::new();
        for (name, value) in scalars {
            write_bytes(&mut g, GRAPH_INITIALIZER, &scalar(name, *value));
        }
        for (op, inputs, outputs) in nodes {
            write_bytes(&mut g, GRAPH_NODE, &encode_node(&format!("n_{}", outputs[0]), op, inputs, outputs, &[]));
        }
        let mut m = Vec::new();
        write_field(&mut m, 1, WIRE_VARINT, &[10]);
        write_bytes(&mut m, MODEL_GRAPH, &g);
        m
    }

    fn ops(model: &[u8]) -> Vec<(String, Vec<String>, Vec<String>)> {
        let top = parse(model).unwrap();
        let g = top.iter().find(|f| f.num == MODEL_GRAPH).unwrap();
        parse(g.data)
            .unwrap()
            .iter()
            .filter(|f| f.num == GRAPH_NODE)
            .map(|f| node(f.data).unwrap())
            .map(|n| (n.op_type, n.inputs, n.outputs))
            .collect()
    }

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    const ATTENTION: &[(&str, &[&str], &[&str])] = &[
        ("Where", &["mask", "zero", "min"], &["bias"]),
        ("MatMul", &["q", "k"], &["s"]),
        ("Add", &["s", "bias"], &["biased"]),
        ("Softmax", &["biased"], &["p"]),
        ("IsNaN", &["p"], &["nan"]),
        ("Where", &["nan", "zero", "p"], &["guarded"]),
        ("MatMul", &["guarded", "v"], &["out"]),
    ];

    #[test]
    fn attention_mask_bias_and_nan_guard_become_identities() {
        let (out, done) = simplify(&model(ATTENTION, &[("zero", 0.0), ("min", f32::MIN)])).unwrap();
        assert_eq!(done, Simplified { masks: 1, gelus: 0 });
        let got = ops(&out);
        assert!(got.contains(&("Identity".into(), strings(&["s"]), strings(&["biased"]))), "{got:?}");
        assert!(got.contains(&("Identity".into(), strings(&["p"]), strings(&["guarded"]))), "{got:?}");
        assert!(!got.iter().any(|o| o.0 == "IsNaN" || o.0 == "Add"), "{got:?}");
        assert!(got.contains(&("MatMul".into(), strings(&["guarded", "v"]), strings(&["out"]))));
    }

    #[test]
    fn a_guard_that_is_not_exactly_the_nan_guard_is_kept() {
        // Where(IsNaN(p), 1, p) is not an identity; nothing changes.
        let m = model(ATTENTION, &[("zero", 1.0), ("min", f32::MIN)]);
        let (out, done) = simplify(&m).unwrap();
        assert_eq!((done, out == m), (Simplified::default(), true));
    }

    #[test]
    fn erf_gelu_becomes_one_operator_in_either_order() {
        for x_first in [false, true] {
            let (m1, m2): (&[&str], &[&str]) =
                if x_first { (&["x", "plus1"], &["half", "m1"]) } else { (&["half", "plus1"], &["x", "m1"]) };
            let nodes: Vec<(&str, &[&str], &[&str])> = vec![
                ("MatMul", &["a", "w"], &["x"]),
                ("Div", &["x", "sqrt2"], &["d"]),
                ("Erf", &["d"], &["e"]),
                ("Add", &["e", "one"], &["plus1"]),
                ("Mul", m1, &["m1"]),
                ("Mul", m2, &["g"]),
                ("MatMul", &["g", "w2"], &["y"]),
            ];
            let scalars = [("sqrt2", std::f32::consts::SQRT_2), ("one", 1.0), ("half", 0.5)];
            let (out, done) = simplify(&model(&nodes, &scalars)).unwrap();
            assert_eq!(done.gelus, 1);
            let got = ops(&out);
            assert_eq!(
                got.iter().map(|o| o.0.as_str()).collect::<Vec<_>>(),
                ["MatMul", "Gelu", "MatMul"],
                "{got:?}"
            );
            assert_eq!(got[1].1, strings(&["x"]));
            assert_eq!(got[1].2, strings(&["g"]));
            let top = parse(&out).unwrap();
            assert!(top.iter().any(|f| f.num == MODEL_OPSET_IMPORT), "the contrib domain is imported");
        }
    }

    #[test]
    fn a_gelu_with_other_constants_is_kept() {
        let nodes: Vec<(&str, &[&str], &[&str])> = vec![
            ("Div", &["x", "c"], &["d"]),
            ("Erf", &["d"], &["e"]),
            ("Add", &["e", "one"], &["plus1"]),
            ("Mul", &["half", "plus1"], &["m1"]),
            ("Mul", &["x", "m1"], &["g"]),
        ];
        let m = model(&nodes, &[("c", 2.0), ("one", 1.0), ("half", 0.5)]);
        let (out, done) = simplify(&m).unwrap();
        assert_eq!((done.gelus, out == m), (0, true));
    }

    #[test]
    fn malformed_input_is_an_error_not_a_panic() {
        assert!(simplify(&[0x3a, 0xff, 0xff]).is_err());
        assert!(simplify(b"").is_err());
    }

    mod fuzz {
        //! The simplification reads bytes it did not write: anything is a
        //! model or an error, never a panic.
        use super::*;
        use proptest::prelude::*;

        proptest! {
            #[test]
            fn a_model_with_damaged_bytes_is_simplified_or_refused(at in 0usize..2000, byte in any::<u8>()) {
                let mut m = model(ATTENTION, &[("zero", 0.0), ("min", f32::MIN)]);
                let i = at % m.len();
                m[i] = byte;
                let _ = simplify(&m);
            }
        }
    }
}
