"""Weight-only int8 for an fp32 ONNX export, the way the shipped MiniLM
export is stored: each large weight as i8 with a scale per output channel
(per row for an embedding table), turned back to fp32 by a Cast and a Mul
that ONNX Runtime folds when it loads the model. The arithmetic stays fp32,
so the vectors agree with the fp32 model's to about 0.9996, at a quarter of
the size.

usage: onnx_int8.py FP32_ONNX OUT_ONNX
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from prepare import quantize_i8

# Weights smaller than this (biases, layer norms, token types) stay fp32.
MIN_ELEMENTS = 65536


def weight_only_int8(model):
    gathered = {n.input[0] for n in model.graph.node if n.op_type == "Gather"}
    keep, added_inits, added_nodes = [], [], []
    for init in model.graph.initializer:
        arr = numpy_helper.to_array(init)
        if arr.dtype != np.float32 or arr.ndim != 2 or arr.size < MIN_ELEMENTS:
            keep.append(init)
            continue
        q, scale = quantize_i8(arr, per_row=init.name in gathered)
        added_inits += [numpy_helper.from_array(q, init.name + "_q"), numpy_helper.from_array(scale, init.name + "_scale")]
        added_nodes += [
            helper.make_node("Cast", [init.name + "_q"], [init.name + "_f"], to=TensorProto.FLOAT),
            helper.make_node("Mul", [init.name + "_f", init.name + "_scale"], [init.name]),
        ]
    nodes = list(model.graph.node)
    del model.graph.initializer[:]
    model.graph.initializer.extend(keep + added_inits)
    del model.graph.node[:]
    model.graph.node.extend(added_nodes + nodes)
    onnx.checker.check_model(model)
    return model


def main():
    model = onnx.load(sys.argv[1])
    onnx.save(weight_only_int8(model), sys.argv[2])


if __name__ == "__main__":
    main()
