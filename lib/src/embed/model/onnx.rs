//! Just enough of the ONNX protobuf encoding to find, replace and add
//! nodes in a model without a protobuf dependency; everything not touched is
//! copied through byte for byte. Used by the graph rewrites in `int8` and
//! `graph`.

use anyhow::{anyhow, bail, Result};

// Field numbers from onnx.proto.
pub(crate) const MODEL_GRAPH: u32 = 7;
pub(crate) const MODEL_OPSET_IMPORT: u32 = 8;
pub(crate) const OPSET_DOMAIN: u32 = 1;
pub(crate) const OPSET_VERSION: u32 = 2;
pub(crate) const GRAPH_NODE: u32 = 1;
pub(crate) const GRAPH_INITIALIZER: u32 = 5;
pub(crate) const GRAPH_VALUE_INFO: u32 = 13;
pub(crate) const GRAPH_OUTPUT: u32 = 12;
pub(crate) const NODE_INPUT: u32 = 1;
pub(crate) const NODE_OUTPUT: u32 = 2;
pub(crate) const NODE_NAME: u32 = 3;
pub(crate) const NODE_OP_TYPE: u32 = 4;
pub(crate) const NODE_DOMAIN: u32 = 7;
pub(crate) const NODE_ATTRIBUTE: u32 = 5;
pub(crate) const ATTRIBUTE_NAME: u32 = 1;
pub(crate) const ATTRIBUTE_F: u32 = 2;
pub(crate) const ATTRIBUTE_I: u32 = 3;
pub(crate) const ATTRIBUTE_INTS: u32 = 8;
pub(crate) const ATTRIBUTE_TYPE: u32 = 20;
pub(crate) const ATTRIBUTE_TYPE_FLOAT: u64 = 1;
pub(crate) const ATTRIBUTE_TYPE_INT: u64 = 2;
pub(crate) const ATTRIBUTE_TYPE_INTS: u64 = 7;
pub(crate) const TENSOR_DIMS: u32 = 1;
pub(crate) const TENSOR_DATA_TYPE: u32 = 2;
pub(crate) const TENSOR_NAME: u32 = 8;
pub(crate) const TENSOR_FLOAT_DATA: u32 = 4;
pub(crate) const TENSOR_RAW_DATA: u32 = 9;
pub(crate) const VALUE_INFO_NAME: u32 = 1;
pub(crate) const TYPE_FLOAT: u64 = 1;
pub(crate) const TYPE_INT8: u64 = 3;
pub(crate) const TYPE_INT64: u64 = 7;

pub(crate) const WIRE_VARINT: u8 = 0;
pub(crate) const WIRE_I64: u8 = 1;
pub(crate) const WIRE_LEN: u8 = 2;
pub(crate) const WIRE_I32: u8 = 5;

/// One protobuf field: its number, wire type and encoded value (the varint
/// bytes, the fixed bytes, or a length-delimited payload).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Field<'a> {
    pub(crate) num: u32,
    pub(crate) wire: u8,
    pub(crate) data: &'a [u8],
}

pub(crate) fn read_varint(buf: &[u8], pos: &mut usize) -> Result<u64> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *buf.get(*pos).ok_or_else(|| anyhow!("truncated varint"))?;
        *pos += 1;
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Ok(value);
        }
    }
    bail!("varint too long")
}

pub(crate) fn parse(buf: &[u8]) -> Result<Vec<Field<'_>>> {
    let mut fields = Vec::new();
    let mut pos = 0;
    while pos < buf.len() {
        let key = read_varint(buf, &mut pos)?;
        let (num, wire) = ((key >> 3) as u32, (key & 7) as u8);
        let start = pos;
        let end = match wire {
            WIRE_VARINT => {
                read_varint(buf, &mut pos)?;
                pos
            }
            WIRE_I64 => pos + 8,
            WIRE_I32 => pos + 4,
            WIRE_LEN => {
                let len = usize::try_from(read_varint(buf, &mut pos)?)?;
                let start = pos;
                pos = start.checked_add(len).ok_or_else(|| anyhow!("length overflow"))?;
                if pos > buf.len() {
                    bail!("truncated field {num}");
                }
                fields.push(Field { num, wire, data: &buf[start..pos] });
                continue;
            }
            other => bail!("unsupported wire type {other} in field {num}"),
        };
        if end > buf.len() {
            bail!("truncated field {num}");
        }
        pos = end;
        fields.push(Field { num, wire, data: &buf[start..end] });
    }
    Ok(fields)
}

pub(crate) fn write_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

pub(crate) fn write_field(out: &mut Vec<u8>, num: u32, wire: u8, data: &[u8]) {
    write_varint(out, (u64::from(num) << 3) | u64::from(wire));
    if wire == WIRE_LEN {
        write_varint(out, data.len() as u64);
    }
    out.extend_from_slice(data);
}

pub(crate) fn write_bytes(out: &mut Vec<u8>, num: u32, data: &[u8]) {
    write_field(out, num, WIRE_LEN, data);
}

pub(crate) fn varint_value(data: &[u8]) -> Result<u64> {
    read_varint(data, &mut 0)
}

pub(crate) fn text(data: &[u8]) -> Result<String> {
    String::from_utf8(data.to_vec()).map_err(|_| anyhow!("a name is not UTF-8"))
}

/// The parts of a NodeProto the rewrite looks at.
#[derive(Clone)]
pub(crate) struct Node {
    pub(crate) inputs: Vec<String>,
    pub(crate) outputs: Vec<String>,
    pub(crate) op_type: String,
    pub(crate) domain: String,
    /// Attribute names with their integer values (0 for other kinds).
    pub(crate) attributes: Vec<(String, i64)>,
}

impl Node {
    /// Whether this is the default domain's `op_type` with `inputs` inputs
    /// and one output.
    pub(crate) fn is(&self, op_type: &str, inputs: usize) -> bool {
        self.op_type == op_type && self.domain.is_empty() && self.inputs.len() == inputs && self.outputs.len() == 1
    }
}

/// The name of an encoded ValueInfoProto (a graph's input, output or
/// recorded shape); None when it has none.
pub(crate) fn value_info_name(data: &[u8]) -> Result<Option<String>> {
    parse(data)?.into_iter().find(|g| g.num == VALUE_INFO_NAME).map(|g| text(g.data)).transpose()
}

pub(crate) fn node(data: &[u8]) -> Result<Node> {
    let mut n = Node {
        inputs: Vec::new(),
        outputs: Vec::new(),
        op_type: String::new(),
        domain: String::new(),
        attributes: Vec::new(),
    };
    for f in parse(data)? {
        match f.num {
            NODE_INPUT => n.inputs.push(text(f.data)?),
            NODE_OUTPUT => n.outputs.push(text(f.data)?),
            NODE_OP_TYPE => n.op_type = text(f.data)?,
            NODE_DOMAIN => n.domain = text(f.data)?,
            NODE_ATTRIBUTE => {
                let (mut name, mut value) = (String::new(), 0i64);
                for g in parse(f.data)? {
                    match (g.num, g.wire) {
                        (ATTRIBUTE_NAME, WIRE_LEN) => name = text(g.data)?,
                        (ATTRIBUTE_I, WIRE_VARINT) => value = varint_value(g.data)? as i64,
                        _ => {}
                    }
                }
                n.attributes.push((name, value));
            }
            _ => {}
        }
    }
    Ok(n)
}

/// A plain (default-domain) node, encoded.
pub(crate) fn encode_node(
    name: &str,
    op_type: &str,
    inputs: &[&str],
    outputs: &[&str],
    int_attributes: &[(&str, u64)],
) -> Vec<u8> {
    let mut n = Vec::new();
    for i in inputs {
        write_bytes(&mut n, NODE_INPUT, i.as_bytes());
    }
    for o in outputs {
        write_bytes(&mut n, NODE_OUTPUT, o.as_bytes());
    }
    write_bytes(&mut n, NODE_NAME, name.as_bytes());
    write_bytes(&mut n, NODE_OP_TYPE, op_type.as_bytes());
    for (attr, value) in int_attributes {
        let mut a = Vec::new();
        write_bytes(&mut a, ATTRIBUTE_NAME, attr.as_bytes());
        let mut v = Vec::new();
        write_varint(&mut v, *value);
        write_field(&mut a, ATTRIBUTE_I, WIRE_VARINT, &v);
        let mut t = Vec::new();
        write_varint(&mut t, ATTRIBUTE_TYPE_INT);
        write_field(&mut a, ATTRIBUTE_TYPE, WIRE_VARINT, &t);
        write_bytes(&mut n, NODE_ATTRIBUTE, &a);
    }
    n
}

/// An initializer's name, element type and shape.
pub(crate) struct Tensor {
    pub(crate) name: String,
    pub(crate) data_type: u64,
    pub(crate) dims: Vec<u64>,
}

pub(crate) fn tensor(data: &[u8]) -> Result<Tensor> {
    let mut t = Tensor { name: String::new(), data_type: 0, dims: Vec::new() };
    for f in parse(data)? {
        match (f.num, f.wire) {
            (TENSOR_NAME, WIRE_LEN) => t.name = text(f.data)?,
            (TENSOR_DATA_TYPE, WIRE_VARINT) => t.data_type = varint_value(f.data)?,
            (TENSOR_DIMS, WIRE_VARINT) => t.dims.push(varint_value(f.data)?),
            (TENSOR_DIMS, WIRE_LEN) => {
                let mut pos = 0;
                while pos < f.data.len() {
                    t.dims.push(read_varint(f.data, &mut pos)?);
                }
            }
            _ => {}
        }
    }
    Ok(t)
}

/// The same TensorProto with its shape replaced by `dims`.
pub(crate) fn reshape_tensor(data: &[u8], dims: &[u64]) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(data.len() + 8);
    let mut packed = Vec::new();
    for d in dims {
        write_varint(&mut packed, *d);
    }
    write_bytes(&mut out, TENSOR_DIMS, &packed);
    for f in parse(data)? {
        if f.num != TENSOR_DIMS {
            write_field(&mut out, f.num, f.wire, f.data);
        }
    }
    Ok(out)
}

/// An initializer's `raw_data`, the form every tensor of the models we
/// rewrite takes; None when its values are stored another way.
pub(crate) fn raw_data(data: &[u8]) -> Option<&[u8]> {
    parse(data).ok()?.into_iter().find(|f| f.num == TENSOR_RAW_DATA && f.wire == WIRE_LEN).map(|f| f.data)
}

/// An initializer, encoded: `raw` holds its values, little-endian.
pub(crate) fn encode_tensor(name: &str, data_type: u64, dims: &[u64], raw: &[u8]) -> Vec<u8> {
    let mut t = Vec::with_capacity(raw.len() + name.len() + 32);
    let mut packed = Vec::new();
    for d in dims {
        write_varint(&mut packed, *d);
    }
    write_bytes(&mut t, TENSOR_DIMS, &packed);
    let mut kind = Vec::new();
    write_varint(&mut kind, data_type);
    write_field(&mut t, TENSOR_DATA_TYPE, WIRE_VARINT, &kind);
    write_bytes(&mut t, TENSOR_NAME, name.as_bytes());
    write_bytes(&mut t, TENSOR_RAW_DATA, raw);
    t
}

/// The value of a float initializer holding one number (a scalar or a
/// tensor of one element), in `raw_data` or `float_data`; None otherwise.
pub(crate) fn scalar_float(data: &[u8]) -> Option<f32> {
    let t = tensor(data).ok()?;
    if t.data_type != TYPE_FLOAT || t.dims.iter().any(|&d| d != 1) {
        return None;
    }
    let mut value = None;
    for f in parse(data).ok()? {
        let bytes = match (f.num, f.wire) {
            (TENSOR_RAW_DATA, WIRE_LEN) | (TENSOR_FLOAT_DATA, WIRE_LEN) | (TENSOR_FLOAT_DATA, WIRE_I32) => f.data,
            _ => continue,
        };
        if bytes.len() != 4 || value.is_some() {
            return None;
        }
        value = Some(f32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]));
    }
    value
}

/// `encode_node` for an operator of ONNX Runtime's own domain.
pub(crate) fn encode_contrib_node(name: &str, op_type: &str, inputs: &[&str], outputs: &[&str]) -> Vec<u8> {
    let mut n = encode_node(name, op_type, inputs, outputs, &[]);
    write_bytes(&mut n, NODE_DOMAIN, b"com.microsoft");
    n
}

/// The model `top` with its graph replaced by `graph`, importing ONNX
/// Runtime's operator domain if it does not yet.
pub(crate) fn with_graph(top: &[Field<'_>], graph: &[u8]) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(graph.len() + 1024);
    let mut has_ms_opset = false;
    for f in top {
        if f.num == MODEL_OPSET_IMPORT {
            has_ms_opset |= parse(f.data)?.iter().any(|g| g.num == OPSET_DOMAIN && g.data == b"com.microsoft");
        }
    }
    for f in top {
        if f.num == MODEL_GRAPH {
            write_bytes(&mut out, MODEL_GRAPH, graph);
        } else {
            write_field(&mut out, f.num, f.wire, f.data);
        }
    }
    if !has_ms_opset {
        let mut opset = Vec::new();
        write_bytes(&mut opset, OPSET_DOMAIN, b"com.microsoft");
        write_field(&mut opset, OPSET_VERSION, WIRE_VARINT, &[1]);
        write_bytes(&mut out, MODEL_OPSET_IMPORT, &opset);
    }
    Ok(out)
}

/// The encoded graph of a parsed model.
pub(crate) fn graph_of<'a>(top: &[Field<'a>]) -> Result<&'a [u8]> {
    top.iter()
        .find(|f| f.num == MODEL_GRAPH && f.wire == WIRE_LEN)
        .map(|f| f.data)
        .ok_or_else(|| anyhow!("the model has no graph"))
}

/// The encoded node `data` with `suffix` added to its name and its inputs
/// and outputs renamed by `rename`; every other field is kept byte for byte.
pub(crate) fn renamed_node(data: &[u8], suffix: &str, rename: &dyn Fn(&str) -> String) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(data.len() + 64);
    for f in parse(data)? {
        match f.num {
            NODE_INPUT | NODE_OUTPUT => {
                let name = text(f.data)?;
                // An empty name is an omitted optional input: it stays omitted.
                let renamed = if name.is_empty() { name } else { rename(&name) };
                write_bytes(&mut out, f.num, renamed.as_bytes());
            }
            NODE_NAME => write_bytes(&mut out, NODE_NAME, format!("{}{suffix}", text(f.data)?).as_bytes()),
            _ => write_field(&mut out, f.num, f.wire, f.data),
        }
    }
    Ok(out)
}

/// The name of an encoded node; empty when it has none.
pub(crate) fn node_name(data: &[u8]) -> Result<String> {
    match parse(data)?.into_iter().find(|f| f.num == NODE_NAME) {
        Some(f) => text(f.data),
        None => Ok(String::new()),
    }
}

/// A node attribute's value, of the kinds the rewrites write.
pub(crate) enum Attribute {
    Int(i64),
    Float(f32),
    Ints(Vec<i64>),
}

/// A node of `domain` (empty for the default one) with attributes of any
/// of those kinds, encoded.
pub(crate) fn encode_node_with(
    name: &str,
    domain: &str,
    op_type: &str,
    inputs: &[&str],
    outputs: &[&str],
    attributes: &[(&str, Attribute)],
) -> Vec<u8> {
    let mut n = encode_node(name, op_type, inputs, outputs, &[]);
    for (attr, value) in attributes {
        let mut a = Vec::new();
        write_bytes(&mut a, ATTRIBUTE_NAME, attr.as_bytes());
        let kind = match value {
            Attribute::Int(i) => {
                let mut v = Vec::new();
                write_varint(&mut v, *i as u64);
                write_field(&mut a, ATTRIBUTE_I, WIRE_VARINT, &v);
                ATTRIBUTE_TYPE_INT
            }
            Attribute::Float(f) => {
                write_field(&mut a, ATTRIBUTE_F, WIRE_I32, &f.to_le_bytes());
                ATTRIBUTE_TYPE_FLOAT
            }
            Attribute::Ints(ints) => {
                for i in ints {
                    let mut v = Vec::new();
                    write_varint(&mut v, *i as u64);
                    write_field(&mut a, ATTRIBUTE_INTS, WIRE_VARINT, &v);
                }
                ATTRIBUTE_TYPE_INTS
            }
        };
        let mut t = Vec::new();
        write_varint(&mut t, kind);
        write_field(&mut a, ATTRIBUTE_TYPE, WIRE_VARINT, &t);
        write_bytes(&mut n, NODE_ATTRIBUTE, &a);
    }
    if !domain.is_empty() {
        write_bytes(&mut n, NODE_DOMAIN, domain.as_bytes());
    }
    n
}
