"""turbo-gnn's GATv2 forward and backward on one graph file, run a few times, for ncu to profile
(sixteenth session, call 1). Usage: python3 turbo-profile.py GRAPH.npz HEADS FEAT"""
import sys

import torch

sys.path.insert(0, "benches")
from peers import Case, turbo_graph  # noqa: E402

import turbo_gnn  # noqa: E402

path, heads, feat = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
device = torch.device("cuda")
case = Case(path, device, 4)
graph = turbo_graph(case)
g = torch.Generator(device=device).manual_seed(1)
x_l = torch.randn((case.num_src, heads, feat), device=device, generator=g, requires_grad=True)
x_r = torch.randn((case.num_dst, heads, feat), device=device, generator=g, requires_grad=True)
att = torch.randn((heads, feat), device=device, generator=g, requires_grad=True)
for _ in range(3):
    out = turbo_gnn.ops.gatv2_aggr(graph, x_r, x_l, att, 0.2)
    out.backward(torch.ones_like(out))
torch.cuda.synchronize()
print("turbo gatv2 ran", tuple(out.shape))
