//! A product split at its widest input channels (`Precision::Int8ButWidest`):
//! the product that feeds it is found through the elementwise steps between
//! them (`feeding_weight`), its widest output channels are chosen from its
//! weights (`widest_channels`), and both products and every step between
//! them are computed in two parts, the wide one in fp32 (`split_product`).

use std::collections::{HashMap, HashSet};

use super::super::onnx::*;
use super::{float_at, View, Weight};

/// Operators that work value by value (with a bias or a constant at most),
/// through which a channel of a product's output stays that channel.
const ELEMENTWISE: &[&str] =
    &["Add", "Sub", "Mul", "Div", "Erf", "Gelu", "FastGelu", "BiasGelu", "Tanh", "Sigmoid", "Relu", "Pow"];

/// The product whose output channels, through elementwise steps, are a
/// product's input channels: for a feed-forward layer's output projection,
/// its input projection, and the bias and activation on the way.
pub(super) struct Feeder<'a> {
    pub weight: &'a Weight,
    /// The feeding product's node.
    pub product: usize,
    /// The elementwise nodes between the two products, in graph order.
    pub chain: Vec<usize>,
    /// Float vectors with one value per channel on the way (biases), with their shapes.
    pub per_channel: Vec<(String, Vec<u64>)>,
}

/// The `Feeder` of `input`, the input with `channels` channels of node
/// `consumer`; None unless every step on the way is elementwise with scalars
/// or per-channel vectors used nowhere else, and no other node reads what
/// they compute, so that the channels can be computed in two parts without
/// changing what the model computes.
pub(super) fn feeding_weight<'v>(
    view: &'v View<'_>,
    input: &str,
    consumer: usize,
    channels: u64,
) -> Option<Feeder<'v>> {
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
pub(super) struct Split {
    /// Nodes taking the place of the feeding product and the steps after it.
    pub feeder_nodes: Vec<Vec<u8>>,
    /// Nodes taking the place of the product.
    pub nodes: Vec<Vec<u8>>,
    pub added: Vec<Vec<u8>>,
}

/// The split of MatMul node `product` (its weight `weight`, fed by `feeder`);
/// None when the weights' values are not as their shapes say.
pub(super) fn split_product(
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
