"""Writes a NonMaxSuppression model, its inputs and the greedy selection's
expected output (a plain reference below, the ONNX definition step by step):
B batches, C classes, N random boxes clustered so that many overlap, score and IoU
thresholds and a per-class limit; the model declares the selected count.

usage: make_nms.py OUT_DIR [B C N MAX_PER_CLASS CENTER_POINT_BOX SEED]
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
nb, nc, n, limit, center, seed = (int(v) for v in (sys.argv[2:] or [2, 3, 40, 6, 0, 5]))
rng = np.random.default_rng(seed)
iou_threshold, score_threshold = np.float32(0.3), np.float32(0.25)

# Boxes around a few centres; either corner order (flipped boxes are valid).
centres = rng.uniform(0, 10, size=(nb, 4, 2))
xy = centres[np.arange(nb)[:, None], rng.integers(0, 4, size=(nb, n))] + rng.normal(0, 0.6, (nb, n, 2))
wh = rng.uniform(0.5, 2.5, size=(nb, n, 2))
if center:
    boxes = np.concatenate([xy, wh], axis=2)  # [x_center, y_center, width, height]
else:
    a, b = xy - wh / 2, xy + wh / 2  # [y1, x1, y2, x2], some flipped
    flip = rng.random((nb, n, 1)) < 0.3
    boxes = np.concatenate([np.where(flip, b, a), np.where(flip, a, b)], axis=2)
boxes = boxes.astype(np.float32)
# Scores on a coarse grid, so that ties occur (lower index first).
scores = (rng.integers(0, 20, size=(nb, nc, n)) / 20).astype(np.float32)


def corners(box):
    if center:
        x, y, w, h = (float(v) for v in box)
        return y - h / 2, x - w / 2, y + h / 2, x + w / 2
    y1, x1, y2, x2 = (float(v) for v in box)
    return min(y1, y2), min(x1, x2), max(y1, y2), max(x1, x2)


def suppresses(p, q):
    a, b = corners(p), corners(q)
    area_a = np.float32(a[2] - a[0]) * np.float32(a[3] - a[1])
    area_b = np.float32(b[2] - b[0]) * np.float32(b[3] - b[1])
    if area_a <= 0 or area_b <= 0:
        return False
    h = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    w = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = np.float32(h) * np.float32(w)
    return inter / (area_a + area_b - inter) > iou_threshold


selected = []
for bi in range(nb):
    for ci in range(nc):
        order = sorted(range(n), key=lambda i: (-scores[bi, ci, i], i))
        kept = []
        for i in order:
            if len(kept) == limit:
                break
            if scores[bi, ci, i] <= score_threshold:
                continue
            if not any(suppresses(boxes[bi, k], boxes[bi, i]) for k in kept):
                kept.append(i)
        selected += [[bi, ci, k] for k in kept]
selected = np.array(selected, dtype=np.int64).reshape(-1, 3)

names = ["boxes", "scores", "max_output_boxes_per_class", "iou_threshold", "score_threshold"]
values = [boxes, scores, np.array([limit], np.int64), np.array([iou_threshold], np.float32),
          np.array([score_threshold], np.float32)]
node = helper.make_node("NonMaxSuppression", names, ["selected"], center_point_box=center)
graph = helper.make_graph(
    [node], "nms",
    [helper.make_tensor_value_info(nm, TensorProto.INT64 if v.dtype == np.int64 else TensorProto.FLOAT, v.shape)
     for nm, v in zip(names, values)],
    [helper.make_tensor_value_info("selected", TensorProto.INT64, selected.shape)])
os.makedirs(out, exist_ok=True)
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)]),
          os.path.join(out, "nms.onnx"))
for nm, v in zip(names, values):
    np.save(os.path.join(out, nm + ".npy"), v)
np.save(os.path.join(out, "selected.npy"), selected)
print(f"{len(selected)} selected of {nb * nc * n}")
