"""turbo-gnn's GATv2 (gatv2_aggr) timed as benches/peers.py times a peer: CUDA events, warm-up,
median of repeats, forward and forward+backward, on graph files (sixteenth session, call 3:
beside the A/B runs of dfgnn in the same call). Usage: python3 turbo-time.py HEADS FEAT GRAPH.npz..."""
import statistics
import sys

import torch

sys.path.insert(0, "benches")
from peers import Case, turbo_graph  # noqa: E402

import turbo_gnn  # noqa: E402

heads, feat = int(sys.argv[1]), int(sys.argv[2])
device = torch.device("cuda")


def median_ms(fn, warmup=3, repeats=20):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


for path in sys.argv[3:]:
    case = Case(path, device, 4)
    graph = turbo_graph(case)
    g = torch.Generator(device=device).manual_seed(1)
    x_l = torch.randn((case.num_src, heads, feat), device=device, generator=g, requires_grad=True)
    x_r = torch.randn((case.num_dst, heads, feat), device=device, generator=g, requires_grad=True)
    att = torch.randn((heads, feat), device=device, generator=g, requires_grad=True)
    grad = torch.randn((case.num_dst, heads, feat), device=device, generator=g)

    def forward():
        with torch.no_grad():
            turbo_gnn.ops.gatv2_aggr(graph, x_r, x_l, att, 0.2)

    def forward_backward():
        for t in (x_l, x_r, att):
            t.grad = None
        out = turbo_gnn.ops.gatv2_aggr(graph, x_r, x_l, att, 0.2)
        out.backward(grad)

    print(f"turbo gatv2 {path} {heads}x{feat} | forward {median_ms(forward):.3f} ms, "
          f"forward+backward {median_ms(forward_backward):.3f} ms", flush=True)
