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
//! caller's choice (`embed::model_bytes`), made on `bench/eval.sh`. With the
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

/// Operators that work value by value (with a bias or a constant at most),
/// through which a channel of a product's output stays that channel.
const ELEMENTWISE: &[&str] =
    &["Add", "Sub", "Mul", "Div", "Erf", "Gelu", "FastGelu", "BiasGelu", "Tanh", "Sigmoid", "Relu", "Pow"];

/// The product whose output channels, through elementwise steps, are a
/// product's input channels: for a feed-forward layer's output projection,
/// its input projection, and the bias and activation on the way.
struct Feeder<'a> {
    weight: &'a Weight,
    /// The feeding product's node.
    product: usize,
    /// The elementwise nodes between the two products, in graph order.
    chain: Vec<usize>,
    /// Float vectors with one value per channel on the way (biases), with their shapes.
    per_channel: Vec<(String, Vec<u64>)>,
}

/// The `Feeder` of `input`, the input with `channels` channels of node
/// `consumer`; None unless every step on the way is elementwise with scalars
/// or per-channel vectors used nowhere else, and no other node reads what
/// they compute, so that the channels can be computed in two parts without
/// changing what the model computes.
fn feeding_weight<'v>(view: &'v View<'_>, input: &str, consumer: usize, channels: u64) -> Option<Feeder<'v>> {
    let mut pending = vec![input];
    let mut seen = HashSet::new();
    let mut per_channel = Vec::new();
    let mut found: Option<(usize, &Weight)> = None;
    while let Some(name) = pending.pop() {
        if let Some(t) = view.initializers.get(name) {
            let values = t.dims.iter().try_fold(1u64, |n, &d| n.checked_mul(d))?;
            // One value per channel, along the last axis, as a bias is.
            let along_channels = values == channels && t.dims.last() == Some(&channels);
            if along_channels && t.data_type == TYPE_FLOAT && view.users.get(name).is_some_and(|u| u.len() == 1) {
                per_channel.push((name.to_string(), t.dims.clone()));
            } else if values != 1 {
                return None;
            }
            continue;
        }
        let &k = view.producer.get(name)?; // a graph input: not computed here
        if !seen.insert(k) {
            continue;
        }
        if seen.len() > 32 {
            return None; // not a feed-forward layer's few steps
        }
        let n = view.node(k);
        if n.op_type == "MatMul" && n.domain.is_empty() && n.inputs.len() == 2 {
            let w = view.weights.get(n.inputs[1].as_str()).filter(|w| w.per_column && w.shape.1 == channels)?;
            if found.is_some_and(|(product, _)| product != k) {
                return None;
            }
            found = Some((k, w));
            continue;
        }
        if !ELEMENTWISE.contains(&n.op_type.as_str()) || !n.domain.is_empty() {
            return None;
        }
        pending.extend(n.inputs.iter().map(String::as_str));
    }
    // Computing the channels in parts is only safe if nothing else reads them.
    let on_the_way = |u: &usize| *u == consumer || seen.contains(u);
    let read_elsewhere = seen
        .iter()
        .flat_map(|&k| &view.node(k).outputs)
        .any(|o| !view.users.get(o.as_str()).is_some_and(|u| u.iter().all(on_the_way)));
    if read_elsewhere {
        return None;
    }
    let (product, weight) = found?;
    let mut chain: Vec<usize> = seen.into_iter().filter(|&c| c != product).collect();
    chain.sort_unstable();
    Some(Feeder { weight, product, chain, per_channel })
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

/// The `count` columns of `weight` (int8 values `q`, one fp32 scale per
/// column) with the largest entries: the output channels that product can
/// make widest. None when the values are not as its shape says.
fn widest_channels(weight: &Weight, q: &[u8], scale: &[u8], count: usize) -> Option<Vec<usize>> {
    let cols = weight.shape.1 as usize;
    if !weight.holds(q, scale) || count == 0 || count >= cols {
        return None;
    }
    let mut largest = vec![0u8; cols];
    for row in q.chunks_exact(cols) {
        for (m, &v) in largest.iter_mut().zip(row) {
            *m = (*m).max((v as i8).unsigned_abs());
        }
    }
    let width = |j: usize| f32::from(largest[j]) * float_at(scale, j).abs();
    let mut order: Vec<usize> = (0..cols).collect();
    order.sort_by(|&a, &b| width(b).total_cmp(&width(a)).then(a.cmp(&b)));
    order.truncate(count);
    Some(order)
}

fn float_at(raw: &[u8], i: usize) -> f32 {
    f32::from_le_bytes([raw[4 * i], raw[4 * i + 1], raw[4 * i + 2], raw[4 * i + 3]])
}

/// The fp32 values at `channels` of a float vector stored as `raw`.
fn floats_at(raw: &[u8], channels: &[usize]) -> Vec<u8> {
    channels.iter().flat_map(|&j| raw[4 * j..4 * j + 4].to_vec()).collect()
}

fn part_name(value: &str, part: &str) -> String {
    format!("{value}_vg_{part}")
}

/// `MatMul(a, weight)` computed as
/// `Add(DynamicQuantizeMatMul(a_narrow, narrow, scale), MatMul(a_wide, wide))`,
/// where `a_wide` holds the `count` channels of `a` that the feeding product
/// can make widest and `a_narrow` the others, each computed on its own: the
/// feeding product is split by columns into two products, and each
/// elementwise step on the way (bias, activation) is done once for each
/// part, with its per-channel vectors split the same way. `wide` holds the
/// weight's rows for the wide channels in fp32, `narrow` the others in int8.
/// What the model computes does not change, and no activation is sliced or
/// copied on the way (a `Split` of the activations cost 3% of the model's
/// time). Where the feeding product is in int8 (`up_in_int8`), the bias
/// right after it becomes its bias input.
#[derive(Default)]
struct Split {
    /// Nodes taking the place of the feeding product and the steps after it.
    feeder_nodes: Vec<Vec<u8>>,
    /// Nodes taking the place of the product.
    nodes: Vec<Vec<u8>>,
    added: Vec<Vec<u8>>,
}

/// The split of MatMul node `product` (its weight `weight`, fed by `feeder`);
/// None when the weights' values are not as their shapes say.
fn split_product(
    view: &View<'_>,
    product: usize,
    weight: &Weight,
    feeder: &Feeder<'_>,
    count: usize,
    up_in_int8: bool,
) -> Option<Split> {
    let plan = SplitPlan::new(view, weight, feeder, count, up_in_int8)?;
    let mut split = Split::default();
    for (part, channels) in [("wide", &plan.wide), ("narrow", &plan.narrow)] {
        plan.feeder_part(part, channels, &mut split)?;
    }
    plan.product_parts(view.node(product), &mut split);
    Some(split)
}

/// What a split needs to know, checked.
struct SplitPlan<'a> {
    view: &'a View<'a>,
    weight: &'a Weight,
    feeder: &'a Feeder<'a>,
    /// The feeding product's input and output.
    x: &'a str,
    h: &'a str,
    /// The elementwise steps between the products, with their encodings.
    chain: Vec<(&'a Node, &'a [u8])>,
    up_in_int8: bool,
    /// The product's weight and the feeding product's weight, as stored.
    q: &'a [u8],
    scale: &'a [u8],
    up_q: &'a [u8],
    up_scale: &'a [u8],
    /// The channels computed in fp32 and those computed in int8.
    wide: Vec<usize>,
    narrow: Vec<usize>,
    /// The step `Add(h, bias)` that the int8 feeding product takes as its bias input.
    folded: Option<usize>,
    /// Values computed once per part.
    in_parts: HashSet<&'a str>,
}

impl<'a> SplitPlan<'a> {
    fn new(
        view: &'a View<'a>,
        weight: &'a Weight,
        feeder: &'a Feeder<'a>,
        count: usize,
        up_in_int8: bool,
    ) -> Option<SplitPlan<'a>> {
        let rows = weight.shape.0 as usize;
        let (q, scale) = (view.values(&weight.quantized)?, view.values(&weight.scale)?);
        let up = feeder.weight;
        let (up_q, up_scale) = (view.values(&up.quantized)?, view.values(&up.scale)?);
        if !weight.holds(q, scale) || !up.holds(up_q, up_scale) || up.shape.1 as usize != rows {
            return None;
        }
        let wide = widest_channels(up, up_q, up_scale, count)?;
        let chosen: HashSet<usize> = wide.iter().copied().collect();
        let narrow: Vec<usize> = (0..rows).filter(|r| !chosen.contains(r)).collect();
        let up_node = view.node(feeder.product);
        let (x, h) = (up_node.inputs[0].as_str(), up_node.outputs[0].as_str());
        let chain: Vec<(&Node, &[u8])> = feeder.chain.iter().map(|&c| (view.node(c), view.graph.encoded(c))).collect();
        let in_parts = chain
            .iter()
            .flat_map(|(n, _)| n.outputs.iter().map(String::as_str))
            .chain([h])
            .chain(feeder.per_channel.iter().map(|(n, _)| n.as_str()))
            .collect();
        let mut plan = SplitPlan {
            view,
            weight,
            feeder,
            x,
            h,
            chain,
            up_in_int8,
            q,
            scale,
            up_q,
            up_scale,
            wide,
            narrow,
            folded: None,
            in_parts,
        };
        plan.folded = plan.folded_bias();
        Some(plan)
    }

    /// The chain's step `Add(h, bias)` with a per-channel bias, when it is
    /// the only step reading `h` and the feeding product runs in int8.
    fn folded_bias(&self) -> Option<usize> {
        let rows = self.weight.shape.0;
        let h = self.h;
        let per_channel: HashMap<&str, &[u64]> =
            self.feeder.per_channel.iter().map(|(n, d)| (n.as_str(), d.as_slice())).collect();
        self.chain.iter().position(|(n, _)| {
            let bias = match n.inputs.as_slice() {
                [a, b] if a == h => b,
                [a, b] if b == h => a,
                _ => return false,
            };
            self.up_in_int8
                && n.is("Add", 2)
                && per_channel.get(bias.as_str()) == Some(&&[rows][..])
                && self.chain.iter().filter(|(m, _)| m.inputs.iter().any(|i| i == h)).count() == 1
        })
    }

    /// The feeding product's columns at `channels`, and the steps after it,
    /// computed for one part.
    fn feeder_part(&self, part: &str, channels: &[usize], split: &mut Split) -> Option<()> {
        let (up, h, rows) = (self.feeder.weight, self.h, self.weight.shape.0 as usize);
        let width = channels.len() as u64;
        let (weight_name, scale_name) =
            (part_name(&format!("{h}_weight"), part), part_name(&format!("{h}_scale"), part));
        let up_rows = up.shape.0 as usize;
        let columns: Vec<u8> =
            (0..up_rows).flat_map(|i| channels.iter().map(move |&j| self.up_q[i * rows + j])).collect();
        if self.up_in_int8 {
            let (output, bias) = match self.folded {
                Some(f) => {
                    let add = self.chain[f].0;
                    let bias = if add.inputs[0] == h { &add.inputs[1] } else { &add.inputs[0] };
                    (part_name(&add.outputs[0], part), part_name(bias, part))
                }
                None => (part_name(h, part), String::new()),
            };
            let mut inputs = vec![self.x, weight_name.as_str(), scale_name.as_str()];
            if self.folded.is_some() {
                inputs.extend(["", bias.as_str()]);
            }
            split.feeder_nodes.push(encode_contrib_node(
                &part_name(h, part),
                "DynamicQuantizeMatMul",
                &inputs,
                &[&output],
            ));
            split.added.push(encode_tensor(&weight_name, TYPE_INT8, &[up.shape.0, width], &columns));
            split.added.push(encode_tensor(&scale_name, TYPE_FLOAT, &[width], &floats_at(self.up_scale, channels)));
        } else {
            let dequantized: Vec<u8> = columns
                .iter()
                .enumerate()
                .flat_map(|(n, &v)| {
                    (f32::from(v as i8) * float_at(self.up_scale, channels[n % channels.len()])).to_le_bytes()
                })
                .collect();
            let out = part_name(h, part);
            split.feeder_nodes.push(encode_node(&out, "MatMul", &[self.x, &weight_name], &[&out], &[]));
            split.added.push(encode_tensor(&weight_name, TYPE_FLOAT, &[up.shape.0, width], &dequantized));
        }
        for (name, dims) in &self.feeder.per_channel {
            let raw = self.view.values(name)?;
            if raw.len() != rows * 4 {
                return None;
            }
            let mut part_dims = dims.clone();
            *part_dims.last_mut()? = width;
            split.added.push(encode_tensor(&part_name(name, part), TYPE_FLOAT, &part_dims, &floats_at(raw, channels)));
        }
        let suffix = format!("_vg_{part}");
        let rename = |v: &str| if self.in_parts.contains(v) { part_name(v, part) } else { v.to_string() };
        for (step, (_, data)) in self.chain.iter().enumerate() {
            if Some(step) != self.folded {
                split.feeder_nodes.push(renamed_node(data, &suffix, &rename).ok()?);
            }
        }
        Some(())
    }

    /// The product as the sum of its wide part in fp32 and its narrow part in int8.
    fn product_parts(&self, product: &Node, split: &mut Split) {
        let cols = self.weight.shape.1 as usize;
        let mut wide: Vec<u8> = Vec::with_capacity(self.wide.len() * cols * 4);
        for &r in &self.wide {
            for (c, &v) in self.q[r * cols..(r + 1) * cols].iter().enumerate() {
                wide.extend_from_slice(&(f32::from(v as i8) * float_at(self.scale, c)).to_le_bytes());
            }
        }
        let narrow: Vec<u8> = self.narrow.iter().flat_map(|&r| self.q[r * cols..(r + 1) * cols].to_vec()).collect();
        let (a, out) = (product.inputs[0].as_str(), product.outputs[0].as_str());
        let name = |part: &str| format!("{out}_vg_{part}");
        let (wide_out, narrow_out, wide_weight, narrow_weight) =
            (name("wide"), name("narrow"), name("wide_weight"), name("narrow_weight"));
        split.nodes = vec![
            encode_node(&wide_out, "MatMul", &[&part_name(a, "wide"), &wide_weight], &[&wide_out], &[]),
            encode_contrib_node(
                &narrow_out,
                "DynamicQuantizeMatMul",
                &[&part_name(a, "narrow"), &narrow_weight, &self.weight.scale],
                &[&narrow_out],
            ),
            encode_node(&name("sum"), "Add", &[&narrow_out, &wide_out], &[out], &[]),
        ];
        split.added.push(encode_tensor(&wide_weight, TYPE_FLOAT, &[self.wide.len() as u64, cols as u64], &wide));
        split.added.push(encode_tensor(&narrow_weight, TYPE_INT8, &[self.narrow.len() as u64, cols as u64], &narrow));
    }
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
