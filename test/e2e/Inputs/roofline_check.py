"""Checks kiln-run --profile's roofline figures in its JSON and trace against
the MatMul of roofline.test: counts, rates and the roofline fraction."""
import json
import sys

cpu = json.load(open(sys.argv[1]))["profile"]
gpu = json.load(open(sys.argv[2]))["profile"]
trace = json.load(open(sys.argv[3]))["traceEvents"]

flops, nbytes = 2 * 64 * 32 * 128, (64 * 32 + 32 * 128 + 64 * 128) * 4
peak_flops, peak_bw = cpu["peaks"]["gflops_per_s"], cpu["peaks"]["gb_per_s"]
assert (peak_flops, peak_bw) == (100, 10), cpu["peaks"]
(mm,) = [k for k in cpu["kernels"] if k["name"] == "matmul (scf.forall)"]
assert (mm["flops"], mm["bytes"]) == (flops, nbytes), mm
rel = lambda a, b: abs(a - b) <= 1e-9 + 1e-5 * abs(b)
assert rel(mm["gflops_per_s"], flops / (mm["ms"] * 1e6)), mm
assert rel(mm["gb_per_s"], nbytes / (mm["ms"] * 1e6)), mm
bound = min(peak_flops, flops / nbytes * peak_bw)
assert rel(mm["roofline_fraction"], mm["gflops_per_s"] / bound), mm
assert len(cpu["kernels"]) == 1, cpu["kernels"]  # The fill is in registers.
print(f"cpu: matmul {mm['flops']} flops {mm['bytes']} bytes, "
      "rates and roofline agree")

assert "peaks" not in gpu and all("roofline_fraction" not in k
                                  for k in gpu["kernels"]), gpu
print(f"gpu: {sum(k['flops'] for k in gpu['kernels'])} flops in "
      f"{len(gpu['kernels'])} kernels")

events = [e for e in trace if "flops" in e["args"]]
assert sum(e["args"]["flops"] for e in events) == flops, events
print(f"trace: {len(events)} events with flops")
