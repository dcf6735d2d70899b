//! Simplify the embedding model's graph where ONNX Runtime leaves work
//! undone, for a model that is given one text per run.
//!
//! The export we ship spells out three things ONNX Runtime does not fuse:
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
//!   ONNX Runtime's `Gelu`, the same function in one pass.
//! - **Heads.** Each layer copies its activations five times to put the
//!   attention heads first and back (`HeadsInPlace`); ONNX Runtime's
//!   `FusedMatMul` reads the heads where they lie, so one copy is left.
//!   Its batch axis is squeezed away, so a batch of more than one text
//!   fails to run rather than mixing texts.
//!
//! What computed only the removed steps' inputs (the mask's bias, the
//! transposes) goes too. Measured on tokio's chunks
//! (lib/examples/embed_speed.rs), masks and GELU took about a sixth of the
//! model's time; the heads' copies, with their reshapes, about 8% of what
//! was left. The simplified graph computes the same numbers: ONNX Runtime
//! gives bit-identical hidden states for 300 of tokio's chunks with and
//! without the heads step.

use std::collections::{HashMap, HashSet};

use anyhow::Result;

use super::edit::{Edit, Graph};
use super::onnx::*;

/// Changes whenever the simplification does, so that caches of its output are rebuilt.
pub(crate) const VERSION: u32 = 2;

/// What `simplify` changed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Simplified {
    /// Attention layers whose mask bias and NaN guard were removed.
    pub masks: usize,
    /// GELUs written as one operator.
    pub gelus: usize,
    /// Attention layers whose heads are multiplied where they lie.
    pub heads: usize,
}

/// Simplify `model` (the bytes of an ONNX file) for single-text runs. A
/// model with nothing to simplify comes back unchanged.
pub(crate) fn simplify(model: &[u8]) -> Result<(Vec<u8>, Simplified)> {
    let graph = Graph::parse(model)?;
    let view = View::of(&graph)?;
    let mut edit = Edit::default();
    let mut done = Simplified::default();
    for k in 0..graph.nodes.len() {
        if graph.is(k, "Softmax", 1) {
            attention(&view, k, &mut edit, &mut done);
        }
    }
    for k in 0..graph.nodes.len() {
        if graph.is(k, "Erf", 1) && gelu(&view, k, &mut edit) {
            done.gelus += 1;
        }
    }
    if edit.is_empty() {
        return Ok((model.to_vec(), done));
    }
    remove_unread(&graph, &view.graph_outputs, &mut edit)?;
    if done.heads > 0 {
        edit.add_initializer(encode_tensor(BATCH_AXIS, TYPE_INT64, &[1], &0i64.to_le_bytes()));
    }
    Ok((edit.write(&graph)?, done))
}

/// What the simplifications look up about a graph.
struct View<'g> {
    graph: &'g Graph<'g>,
    /// Float initializers holding one number.
    scalars: HashMap<String, f32>,
    /// Each Transpose node's `perm`.
    perms: HashMap<usize, Vec<i64>>,
    graph_outputs: HashSet<String>,
    producer: HashMap<&'g str, usize>,
    users: HashMap<&'g str, Vec<usize>>,
}

impl<'g> View<'g> {
    fn of(graph: &'g Graph<'g>) -> Result<View<'g>> {
        let mut scalars = HashMap::new();
        let mut graph_outputs = HashSet::new();
        for f in &graph.fields {
            match f.num {
                GRAPH_INITIALIZER => {
                    if let Some(v) = scalar_float(f.data) {
                        scalars.insert(tensor(f.data)?.name, v);
                    }
                }
                GRAPH_OUTPUT => graph_outputs.extend(value_info_name(f.data)?),
                _ => {}
            }
        }
        let mut perms = HashMap::new();
        for k in 0..graph.nodes.len() {
            if graph.node(k).op_type == "Transpose" {
                perms.insert(k, transpose_perm(graph.encoded(k))?);
            }
        }
        Ok(View { graph, scalars, perms, graph_outputs, producer: graph.producers(), users: graph.users() })
    }

    fn op(&self, k: usize, op_type: &str, arity: usize) -> bool {
        self.graph.is(k, op_type, arity)
    }

    fn node(&self, k: usize) -> &'g Node {
        self.graph.node(k)
    }

    /// The one node reading `name`, if only one does.
    fn only_user(&self, name: &str) -> Option<usize> {
        self.users.get(name).and_then(|u| (u.len() == 1).then(|| u[0]))
    }

    /// The node computing `name`, if it is `op_type` with `arity` inputs.
    fn made_by(&self, name: &str, op_type: &str, arity: usize) -> Option<usize> {
        self.producer.get(name).copied().filter(|&k| self.op(k, op_type, arity))
    }

    fn is_scalar(&self, name: &str, value: f32) -> bool {
        self.scalars.get(name).is_some_and(|v| (v - value).abs() <= 1e-6 * value.abs().max(1.0))
    }

    /// The input of a two-input node other than `name`, when `name` is one of them.
    fn other_input(&self, k: usize, name: &str) -> Option<String> {
        let i = &self.node(k).inputs;
        if i[0] == name {
            Some(i[1].clone())
        } else if i[1] == name {
            Some(i[0].clone())
        } else {
            None
        }
    }
}

fn identity(from: &str, to: &str) -> Vec<u8> {
    encode_node(&format!("{to}_vg_identity"), "Identity", &[from], &[to], &[])
}

/// The attention layer of Softmax node `k`: its mask's bias and NaN guard
/// become identities, and when its heads are laid out as the export lays
/// them, they are multiplied where they lie (`HeadsInPlace`).
fn attention(view: &View<'_>, k: usize, edit: &mut Edit, done: &mut Simplified) {
    let Some(mask) = mask_of(view, k) else { return };
    let g = view.graph;
    edit.replace(g.position(mask.add), vec![identity(&mask.raw, &mask.scores)]);
    edit.replace(g.position(mask.guard), vec![identity(&mask.probabilities, &mask.guarded)]);
    edit.drop_node(g.position(mask.is_nan));
    done.masks += 1;
    let Some(heads) = heads_in_place(view, &mask.raw, &mask.guarded) else { return };
    let raw = mask.raw.as_str();
    let (q, k, v) = (format!("{raw}_vg_q"), format!("{raw}_vg_k"), format!("{raw}_vg_v"));
    let (context, by_token) = (format!("{raw}_vg_context"), format!("{raw}_vg_by_token"));
    use Attribute::{Float, Int, Ints};
    edit.replace(
        g.position(heads.scores),
        vec![
            encode_node(&q, "Squeeze", &[&heads.q, BATCH_AXIS], &[&q], &[]),
            encode_node(&k, "Squeeze", &[&heads.k, BATCH_AXIS], &[&k], &[]),
            encode_node_with(
                &format!("{raw}_vg_scores"),
                "com.microsoft",
                "FusedMatMul",
                &[&q, &k],
                &[raw],
                &[("alpha", Float(heads.alpha)), ("transB", Int(1)), ("transBatchA", Int(1)), ("transBatchB", Int(1))],
            ),
        ],
    );
    let guarded = mask.guarded.as_str();
    edit.replace(
        g.position(heads.context),
        vec![
            encode_node(&v, "Squeeze", &[&heads.v, BATCH_AXIS], &[&v], &[]),
            encode_node_with(
                &context,
                "com.microsoft",
                "FusedMatMul",
                &[guarded, &v],
                &[&context],
                &[("transBatchB", Int(1))],
            ),
            encode_node_with(&by_token, "", "Transpose", &[&context], &[&by_token], &[("perm", Ints(vec![1, 0, 2]))]),
            encode_node(&heads.out, "Unsqueeze", &[&by_token, BATCH_AXIS], &[&heads.out], &[]),
        ],
    );
    edit.drop_node(g.position(heads.merge));
    edit.forget_shapes([raw, &mask.scores, &mask.probabilities, guarded]);
    done.heads += 1;
}

/// An attention layer's mask, as the export spells it:
/// `Softmax(Add(raw, bias))` with the bias made by a `Where`, then
/// `Where(IsNaN(p), 0, p)` on the probabilities `p`.
struct Mask {
    /// The Add, the IsNaN and the guarding Where (nodes).
    add: usize,
    is_nan: usize,
    guard: usize,
    /// The scores before the bias, after it (the Softmax's input), the
    /// probabilities, and the guarded probabilities.
    raw: String,
    scores: String,
    probabilities: String,
    guarded: String,
}

/// The mask of the Softmax node `k`, if it has one.
fn mask_of(view: &View<'_>, k: usize) -> Option<Mask> {
    let n = view.node(k);
    let (scores, probabilities) = (n.inputs[0].as_str(), n.outputs[0].as_str());
    // Softmax(Add(s, bias)) with the bias made by a Where: Softmax(s).
    let add =
        view.producer.get(scores).copied().filter(|&a| view.op(a, "Add", 2) && view.only_user(scores) == Some(k))?;
    let add_inputs = &view.node(add).inputs;
    let made_by_where = |name: &str| view.made_by(name, "Where", 3).is_some();
    let raw = match (made_by_where(&add_inputs[0]), made_by_where(&add_inputs[1])) {
        (false, true) => add_inputs[0].as_str(),
        (true, false) => add_inputs[1].as_str(),
        _ => return None,
    };
    // Where(IsNaN(p), 0, p) after it: p.
    let (is_nan, guard) = view.users.get(probabilities).and_then(|u| match u.as_slice() {
        [a, b] => [(*a, *b), (*b, *a)].into_iter().find(|&(is_nan, w)| {
            view.op(is_nan, "IsNaN", 1)
                && view.op(w, "Where", 3)
                && view.node(w).inputs[0] == view.node(is_nan).outputs[0]
                && view.is_scalar(&view.node(w).inputs[1], 0.0)
                && view.node(w).inputs[2] == probabilities
                && view.only_user(&view.node(is_nan).outputs[0]) == Some(w)
        }),
        _ => None,
    })?;
    Some(Mask {
        add,
        is_nan,
        guard,
        raw: raw.to_string(),
        scores: scores.to_string(),
        probabilities: probabilities.to_string(),
        guarded: view.node(guard).outputs[0].clone(),
    })
}

/// `Div(x, sqrt 2) -> Erf -> Add(., 1) -> Mul(., 0.5) -> Mul(x, .)`, the two
/// Muls in either order, around the Erf node `k`, becomes one `Gelu`;
/// whether it did.
fn gelu(view: &View<'_>, k: usize, edit: &mut Edit) -> bool {
    let n = view.node(k);
    let Some(div) = view.made_by(&n.inputs[0], "Div", 2) else { return false };
    let x = view.node(div).inputs[0].as_str();
    if !view.is_scalar(&view.node(div).inputs[1], std::f32::consts::SQRT_2) || view.only_user(&n.inputs[0]) != Some(k) {
        return false;
    }
    let Some(add) = view.only_user(&n.outputs[0]).filter(|&a| view.op(a, "Add", 2)) else { return false };
    if !view.other_input(add, &n.outputs[0]).is_some_and(|one| view.is_scalar(&one, 1.0)) {
        return false;
    }
    let Some(first) = view.only_user(&view.node(add).outputs[0]).filter(|&m| view.op(m, "Mul", 2)) else {
        return false;
    };
    let Some(second) = view.only_user(&view.node(first).outputs[0]).filter(|&m| view.op(m, "Mul", 2)) else {
        return false;
    };
    let (first_other, second_other) = (
        view.other_input(first, &view.node(add).outputs[0]).unwrap_or_default(),
        view.other_input(second, &view.node(first).outputs[0]).unwrap_or_default(),
    );
    let halves_then_x = view.is_scalar(&first_other, 0.5) && second_other == x;
    let x_then_halves = first_other == x && view.is_scalar(&second_other, 0.5);
    if !(halves_then_x || x_then_halves) {
        return false;
    }
    let out = view.node(second).outputs[0].as_str();
    let g = view.graph;
    edit.replace(g.position(second), vec![encode_contrib_node(&format!("{out}_vg_gelu"), "Gelu", &[x], &[out])]);
    for gone in [div, k, add, first] {
        edit.drop_node(g.position(gone));
    }
    true
}

/// Remove the nodes whose values nothing reads any more once the edit's
/// nodes replaced the old ones (the masks' computation, the heads'
/// transposes), and forget the shapes of their values.
fn remove_unread(graph: &Graph<'_>, graph_outputs: &HashSet<String>, edit: &mut Edit) -> Result<()> {
    // The new graph's nodes, each with the position of the node it comes from.
    let mut kept: Vec<(usize, Vec<u8>, Node)> = Vec::new();
    for (k, (i, n)) in graph.nodes.iter().enumerate() {
        match edit.replacement(*i) {
            Some(encoded) => {
                for e in encoded {
                    kept.push((*i, e.clone(), node(e)?));
                }
            }
            None => kept.push((*i, graph.encoded(k).to_vec(), n.clone())),
        }
    }
    let mut readers: HashMap<String, usize> = HashMap::new();
    for (_, _, n) in &kept {
        for input in &n.inputs {
            *readers.entry(input.clone()).or_default() += 1;
        }
    }
    let kept_producer: HashMap<String, usize> =
        kept.iter().enumerate().flat_map(|(j, (_, _, n))| n.outputs.iter().map(move |o| (o.clone(), j))).collect();
    let mut pending: Vec<usize> = graph
        .nodes
        .iter()
        .filter(|(i, _)| edit.replacement(*i).is_some())
        .flat_map(|(_, n)| n.inputs.iter().filter_map(|input| kept_producer.get(input).copied()))
        .collect();
    let mut removed: HashSet<usize> = HashSet::new();
    let mut unread_values = Vec::new();
    while let Some(j) = pending.pop() {
        let n = &kept[j].2;
        let unread = |o: &String| readers.get(o).copied().unwrap_or(0) == 0 && !graph_outputs.contains(o);
        if removed.contains(&j) || n.outputs.is_empty() || !n.outputs.iter().all(unread) {
            continue;
        }
        removed.insert(j);
        unread_values.extend(n.outputs.iter().cloned());
        for input in &n.inputs {
            if let Some(r) = readers.get_mut(input) {
                *r = r.saturating_sub(1);
            }
            pending.extend(kept_producer.get(input).copied());
        }
    }
    edit.forget_shapes(unread_values);
    let mut survivors: HashMap<usize, Vec<Vec<u8>>> = HashMap::new();
    let touched: HashSet<usize> = removed.iter().map(|&j| kept[j].0).collect();
    for (j, (i, encoded, _)) in kept.into_iter().enumerate() {
        if (touched.contains(&i) || edit.replacement(i).is_some()) && !removed.contains(&j) {
            survivors.entry(i).or_default().push(encoded);
        }
    }
    for i in touched {
        edit.replace(i, survivors.remove(&i).unwrap_or_default());
    }
    for (i, nodes) in survivors {
        edit.replace(i, nodes);
    }
    Ok(())
}

/// The initializer naming axis 0, the batch, that the heads' products
/// squeeze away and put back.
const BATCH_AXIS: &str = "vg_batch_axis";

/// The `perm` attribute of an encoded Transpose; empty when it has none.
fn transpose_perm(data: &[u8]) -> Result<Vec<i64>> {
    let mut perm = Vec::new();
    for f in parse(data)? {
        if f.num != NODE_ATTRIBUTE {
            continue;
        }
        let fields = parse(f.data)?;
        if !fields.iter().any(|g| g.num == ATTRIBUTE_NAME && g.data == b"perm") {
            continue;
        }
        for g in fields {
            match (g.num, g.wire) {
                (ATTRIBUTE_INTS, WIRE_VARINT) => perm.push(varint_value(g.data)? as i64),
                (ATTRIBUTE_INTS, WIRE_LEN) => {
                    let mut pos = 0;
                    while pos < g.data.len() {
                        perm.push(read_varint(g.data, &mut pos)? as i64);
                    }
                }
                _ => {}
            }
        }
    }
    Ok(perm)
}

/// One attention layer's products as the export spells them, per head:
/// each of q, k and v, `[batch, tokens, heads × size]`, is reshaped to
/// `[batch, tokens, heads, size]` and transposed to
/// `[batch, heads, tokens, size]`; k is transposed again, through a
/// three-dimensional reshape, to `[batch, heads, size, tokens]`; q and k are
/// scaled; and the context `[batch, heads, tokens, size]` is transposed back
/// to `[batch, tokens, heads, size]`. That is five copies of a layer's
/// activations. ONNX Runtime's `FusedMatMul` reads each head where it lies
/// in `[tokens, heads, size]` (`transBatchA`, `transBatchB`), so with the
/// batch of one text squeezed away the products need one transpose, of the
/// context: the same sums, in the same order, without the copies.
struct HeadsInPlace {
    /// The scores product and the context product (nodes).
    scores: usize,
    context: usize,
    /// The transpose of the context back to tokens first (node), and its output.
    merge: usize,
    out: String,
    /// q, k and v split into heads, `[batch, tokens, heads, size]`.
    q: String,
    k: String,
    v: String,
    /// The product of q's and k's scales.
    alpha: f32,
}

/// The `HeadsInPlace` of the layer whose scores (before the mask) are
/// `scores` and whose probabilities (after the guard) are `probabilities`.
fn heads_in_place(view: &View<'_>, scores: &str, probabilities: &str) -> Option<HeadsInPlace> {
    let perm_is = |k: usize, p: &[i64]| view.perms.get(&k).is_some_and(|q| q == p);
    // [batch, heads, tokens, size] from [batch, tokens, heads, size]: the split's input.
    let split_heads = |name: &str| -> Option<String> {
        let t = view.made_by(name, "Transpose", 1).filter(|&t| perm_is(t, &[0, 2, 1, 3]))?;
        let input = &view.node(t).inputs[0];
        view.made_by(input, "Reshape", 2)?;
        Some(input.clone())
    };
    // Mul(x, scalar) or Mul(scalar, x): x and the scalar.
    let scaled = |name: &str| -> Option<(String, f32)> {
        let m = view.made_by(name, "Mul", 2)?;
        let i = &view.node(m).inputs;
        match (view.scalars.get(&i[0]), view.scalars.get(&i[1])) {
            (None, Some(&c)) => Some((i[0].clone(), c)),
            (Some(&c), None) => Some((i[1].clone(), c)),
            _ => None,
        }
    };

    let scores_node = view.made_by(scores, "MatMul", 2)?;
    let (scaled_q, scaled_k) = (&view.node(scores_node).inputs[0], &view.node(scores_node).inputs[1]);
    let (q_heads, q_scale) = scaled(scaled_q)?;
    let (k_transposed, k_scale) = scaled(scaled_k)?;
    let q = split_heads(&q_heads)?;
    // k: Reshape(Transpose(Reshape(heads, [batch × heads, tokens, size]), [0, 2, 1]), [batch, heads, size, tokens]).
    let back = view.made_by(&k_transposed, "Reshape", 2)?;
    let swap = view.made_by(&view.node(back).inputs[0], "Transpose", 1).filter(|&t| perm_is(t, &[0, 2, 1]))?;
    let flat = view.made_by(&view.node(swap).inputs[0], "Reshape", 2)?;
    let k = split_heads(&view.node(flat).inputs[0])?;

    let context = view
        .only_user(probabilities)
        .filter(|&c| view.op(c, "MatMul", 2) && view.node(c).inputs[0] == probabilities)?;
    let v = split_heads(&view.node(context).inputs[1])?;
    let merge = view
        .only_user(&view.node(context).outputs[0])
        .filter(|&t| view.op(t, "Transpose", 1) && perm_is(t, &[0, 2, 1, 3]))?;
    Some(HeadsInPlace {
        scores: scores_node,
        context,
        merge,
        out: view.node(merge).outputs[0].clone(),
        q,
        k,
        v,
        alpha: q_scale * k_scale,
    })
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
        assert_eq!(done, Simplified { masks: 1, gelus: 0, heads: 0 });
        let got = ops(&out);
        assert!(got.contains(&("Identity".into(), strings(&["s"]), strings(&["biased"]))), "{got:?}");
        assert!(got.contains(&("Identity".into(), strings(&["p"]), strings(&["guarded"]))), "{got:?}");
        assert!(!got.iter().any(|o| o.0 == "IsNaN" || o.0 == "Add"), "{got:?}");
        assert!(got.contains(&("MatMul".into(), strings(&["guarded", "v"]), strings(&["out"]))));
    }

    /// One attention layer as the export spells it: heads split by
    /// Reshape and Transpose, k transposed through a three-dimensional
    /// reshape, q and k scaled, the mask's bias and the NaN guard.
    fn exported_attention(k_swap: &[i64]) -> Vec<u8> {
        let plain = |op: &str, inputs: &[&str], outputs: &[&str]| {
            encode_node(&format!("n_{}", outputs[0]), op, inputs, outputs, &[])
        };
        let transpose = |input: &str, output: &str, perm: &[i64]| {
            encode_node_with(
                &format!("n_{output}"),
                "",
                "Transpose",
                &[input],
                &[output],
                &[("perm", Attribute::Ints(perm.to_vec()))],
            )
        };
        let mut g = Vec::new();
        for (name, value) in [("zero", 0.0), ("min", f32::MIN), ("c", 0.5)] {
            write_bytes(&mut g, GRAPH_INITIALIZER, &scalar(name, value));
        }
        let nodes = [
            plain("Reshape", &["q_lin", "shape"], &["q4"]),
            transpose("q4", "qt", &[0, 2, 1, 3]),
            plain("Mul", &["qt", "c"], &["qs"]),
            plain("Reshape", &["k_lin", "shape"], &["k4"]),
            transpose("k4", "kt", &[0, 2, 1, 3]),
            plain("Shape", &["kt"], &["k_shape"]),
            plain("Concat", &["k_shape"], &["flat_shape"]),
            plain("Reshape", &["kt", "flat_shape"], &["k3"]),
            transpose("k3", "k3t", k_swap),
            plain("Reshape", &["k3t", "back_shape"], &["kT"]),
            plain("Mul", &["c", "kT"], &["ks"]),
            plain("Where", &["mask", "zero", "min"], &["bias"]),
            plain("MatMul", &["qs", "ks"], &["s"]),
            plain("Add", &["s", "bias"], &["biased"]),
            plain("Softmax", &["biased"], &["p"]),
            plain("IsNaN", &["p"], &["nan"]),
            plain("Where", &["nan", "zero", "p"], &["guarded"]),
            plain("Reshape", &["v_lin", "shape"], &["v4"]),
            transpose("v4", "vt", &[0, 2, 1, 3]),
            plain("MatMul", &["guarded", "vt"], &["ctx"]),
            transpose("ctx", "merged", &[0, 2, 1, 3]),
            plain("Reshape", &["merged", "shape3"], &["out"]),
        ];
        for n in nodes {
            write_bytes(&mut g, GRAPH_NODE, &n);
        }
        let mut output = Vec::new();
        write_bytes(&mut output, VALUE_INFO_NAME, b"out");
        write_bytes(&mut g, GRAPH_OUTPUT, &output);
        let mut m = Vec::new();
        write_bytes(&mut m, MODEL_GRAPH, &g);
        m
    }

    #[test]
    fn attention_heads_are_multiplied_where_they_lie() {
        let (out, done) = simplify(&exported_attention(&[0, 2, 1])).unwrap();
        assert_eq!(done, Simplified { masks: 1, gelus: 0, heads: 1 });
        let got: Vec<(String, Vec<String>, Vec<String>)> = ops(&out);
        let row = |op: &str, inputs: &[&str], outputs: &[&str]| (op.to_string(), strings(inputs), strings(outputs));
        assert_eq!(
            got,
            vec![
                row("Reshape", &["q_lin", "shape"], &["q4"]),
                row("Reshape", &["k_lin", "shape"], &["k4"]),
                row("Squeeze", &["q4", BATCH_AXIS], &["s_vg_q"]),
                row("Squeeze", &["k4", BATCH_AXIS], &["s_vg_k"]),
                row("FusedMatMul", &["s_vg_q", "s_vg_k"], &["s"]),
                row("Identity", &["s"], &["biased"]),
                row("Softmax", &["biased"], &["p"]),
                row("Identity", &["p"], &["guarded"]),
                row("Reshape", &["v_lin", "shape"], &["v4"]),
                row("Squeeze", &["v4", BATCH_AXIS], &["s_vg_v"]),
                row("FusedMatMul", &["guarded", "s_vg_v"], &["s_vg_context"]),
                row("Transpose", &["s_vg_context"], &["s_vg_by_token"]),
                row("Unsqueeze", &["s_vg_by_token", BATCH_AXIS], &["merged"]),
                row("Reshape", &["merged", "shape3"], &["out"]),
            ],
            "the transposes, scalings and the mask's Where are gone"
        );
        let top = parse(&out).unwrap();
        let graph = parse(top.iter().find(|f| f.num == MODEL_GRAPH).unwrap().data).unwrap();
        let encoded: Vec<&[u8]> = graph.iter().filter(|f| f.num == GRAPH_NODE).map(|f| f.data).collect();
        let attributes = |i: usize| node(encoded[i]).unwrap().attributes;
        let scores = attributes(4);
        for (name, value) in [("transB", 1), ("transBatchA", 1), ("transBatchB", 1)] {
            assert!(scores.contains(&(name.to_string(), value)), "{scores:?}");
        }
        // alpha: the two scales' product, 0.25.
        let alpha = parse(encoded[4]).unwrap().into_iter().filter(|f| f.num == NODE_ATTRIBUTE).find_map(|f| {
            let fields = parse(f.data).unwrap();
            let named = fields.iter().any(|g| g.num == ATTRIBUTE_NAME && g.data == b"alpha");
            fields
                .into_iter()
                .find(|g| named && g.num == ATTRIBUTE_F)
                .map(|g| f32::from_le_bytes(g.data.try_into().unwrap()))
        });
        assert_eq!(alpha, Some(0.25));
        assert_eq!(transpose_perm(encoded[11]).unwrap(), [1, 0, 2]);
        let axis = graph
            .iter()
            .filter(|f| f.num == GRAPH_INITIALIZER)
            .find(|f| tensor(f.data).unwrap().name == BATCH_AXIS)
            .unwrap();
        assert_eq!(raw_data(axis.data).unwrap(), 0i64.to_le_bytes());
    }

    #[test]
    fn heads_transposed_another_way_are_left_alone() {
        // k transposed by [1, 0, 2] is not k's transpose per head: only the
        // mask goes, the products stay as they are.
        let (out, done) = simplify(&exported_attention(&[1, 0, 2])).unwrap();
        assert_eq!(done, Simplified { masks: 1, gelus: 0, heads: 0 });
        let kinds: Vec<String> = ops(&out).into_iter().map(|o| o.0).collect();
        assert_eq!(kinds.iter().filter(|k| *k == "Transpose").count(), 5);
        assert!(!kinds.contains(&"FusedMatMul".to_string()));
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
            assert_eq!(got.iter().map(|o| o.0.as_str()).collect::<Vec<_>>(), ["MatMul", "Gelu", "MatMul"], "{got:?}");
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

            #[test]
            fn an_exported_attention_layer_with_damaged_bytes_is_simplified_or_refused(at in 0usize..4000, byte in any::<u8>()) {
                let mut m = exported_attention(&[0, 2, 1]);
                let i = at % m.len();
                m[i] = byte;
                let _ = simplify(&m);
            }
        }
    }
}
