// mpirun -n 2 node gpu.mjs <runtime URL>: real WebGPU buffers (lavapipe here) on both ends. Process 0
// has a kernel write a pattern into a storage buffer, copies it to a MAP_READ buffer, maps it and
// sends from the mapped range; process 1 receives into a MAP_WRITE buffer mapped at creation,
// unmaps it, copies it into a storage buffer, reads that back and checks every byte. Then the
// refusals: an unmapped buffer, bytes past its size, a buffer with a range handed out already. With
// EXPECT_COPY=cma|mpi, the path the group must have chosen.
import { check, pattern, rejection, runtime, sameBytes } from './common.mjs';

const { joinProcessGroup, openGpu, requestDevice, UsageError } = runtime;
const group = await joinProcessGroup({ timeoutMs: 20_000 });
const { device } = await requestDevice(await openGpu());
if (process.env.EXPECT_COPY) check(group.sameHostCopy === process.env.EXPECT_COPY, `same-host copy ${group.sameHostCopy} (${group.sameHostCopyReason}), expected ${process.env.EXPECT_COPY}`);
const SEED = 5;
// Under 16 bytes (one view), a few KiB, and 4 MiB + 12 (its tail anchor not on an 8-byte line).
const sizes = [12, 4096, (4 << 20) + 12];

/** A storage buffer of `bytes` that a kernel filled with pattern(bytes, SEED). */
function patterned(bytes) {
  const buffer = device.createBuffer({ size: bytes, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC });
  const module = device.createShaderModule({
    code: `@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) id: vec3u) {
  let i = id.x + id.y * 65535u * 64u;
  if (i < arrayLength(&out)) { out[i] = ((i + 1u) * 2654435761u) ^ (${SEED}u * 0x01010101u); }
}`,
  });
  const pipeline = device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' } });
  const bind = device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries: [{ binding: 0, resource: { buffer } }] });
  const encoder = device.createCommandEncoder();
  const pass = encoder.beginComputePass();
  pass.setPipeline(pipeline);
  pass.setBindGroup(0, bind);
  pass.dispatchWorkgroups(Math.ceil(bytes / 4 / 64));
  pass.end();
  device.queue.submit([encoder.finish()]);
  return buffer;
}

function copy(from, to, bytes) {
  const encoder = device.createCommandEncoder();
  encoder.copyBufferToBuffer(from, 0, to, 0, bytes);
  device.queue.submit([encoder.finish()]);
}

for (const [tag, bytes] of sizes.entries()) {
  const label = `gpu ${bytes} B (process 0 -> 1)`;
  if (group.rank === 0) {
    const readback = device.createBuffer({ size: bytes, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST, label: 'readback' });
    copy(patterned(bytes), readback, bytes);
    await readback.mapAsync(GPUMapMode.READ);
    await group.send(readback, bytes, 1, tag, label);
    readback.unmap();
  } else {
    const upload = device.createBuffer({ size: bytes, usage: GPUBufferUsage.MAP_WRITE | GPUBufferUsage.COPY_SRC, mappedAtCreation: true, label: 'upload' });
    await group.receive(upload, bytes, 0, tag, label);
    upload.unmap();
    const storage = device.createBuffer({ size: bytes, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC });
    copy(upload, storage, bytes);
    const check_ = device.createBuffer({ size: bytes, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
    copy(storage, check_, bytes);
    await check_.mapAsync(GPUMapMode.READ);
    check(sameBytes(new Uint8Array(check_.getMappedRange()), pattern(bytes, SEED)), `${label}: bytes differ`);
    check_.unmap();
  }
}

// Refusals, before anything is posted.
const buffer = device.createBuffer({ size: 64, usage: GPUBufferUsage.MAP_WRITE | GPUBufferUsage.COPY_SRC, label: 'refused' });
const peer = 1 - group.rank;
await rejection(() => group.receive(buffer, 64, peer, 50, 'unmapped'), UsageError, 'an unmapped buffer');
await buffer.mapAsync(GPUMapMode.WRITE);
await rejection(() => group.receive(buffer, 68, peer, 50, 'past the buffer'), UsageError, 'bytes past the buffer');
buffer.getMappedRange(0, 8);
const taken = await rejection(() => group.receive(buffer, 64, peer, 50, 'range taken'), UsageError, 'a range handed out already');
check(/no mapped range/.test(taken.message), taken.message);

await group.close();
device.destroy();
console.log(`ok ${group.rank} gpu, same-host copy ${group.sameHostCopy}`);
