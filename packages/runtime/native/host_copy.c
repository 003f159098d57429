/*
 * Host copies off the JavaScript thread. A peer copy's bytes go from one device's mapped read-back
 * range to another's mapped upload range; on the JS thread that memcpy is the transfer's bound
 * (benchmarks/peer-copy.md: 6-11 GB/s). Here each copy runs on libuv's thread pool, so several run
 * at once and the JS thread keeps encoding and submitting meanwhile.
 *
 * copy(dst: Uint8Array, src: Uint8Array): Promise<void>: copies src into dst (equal lengths). Both
 * views' buffers are referenced until the copy is done; the caller must keep them mapped until the
 * promise settles (packages/runtime/src/host-copy.ts does).
 *
 * copy(dst, src, offset, length): bytes [offset, offset + length) after the start of each view, which
 * may reach past the views: each view is then only an anchor at the start of a mapped range at least
 * offset + length long (a few bytes from getMappedRange). An ArrayBuffer over a mapped range counts
 * as V8 external memory until it is unmapped, and with 64 MiB or more of them held at once (two
 * transfers' pieces, 4 MiB on each side) V8 ran major collections mid-run, up to 14 ms with the JS thread
 * stopped (benchmarks/peer-copy.md); anchors count 8 bytes.
 *
 * copy(dst, src, offset, length, streaming, slices): the bytes cut into `slices` parts on 64-byte lines,
 * each a work item on the pool, and the promise settled once the last is done: the JS thread settles
 * one promise a copy, however many threads run it.
 *
 * copySync(dst, src, offset, length, streaming): the same bytes copied on the calling (JS) thread, for
 * copies too small to pay for a hand-off to the pool and back; through anchors, so that no ArrayBuffer
 * over a whole mapped range is made (each counts as V8 external memory, and their pressure starts
 * collections).
 *
 * With `streaming` true, the destination is written with non-temporal stores (x86-64; elsewhere
 * memcpy). A memcpy of a 1 MiB slice reads each destination line in before it overwrites it; with
 * non-temporal stores one thread moved 64 MiB between mapped ranges at 7.8 GB/s against 5.6 on two
 * H100s, and the suite's transfers took 0.8x the time (benchmarks/peer-copy.md).
 */
#include <node_api.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__)
#include <emmintrin.h>
#endif

/* One call: its promise, the buffers it keeps alive, and its slices still running. */
typedef struct {
  napi_deferred deferred;
  napi_ref dst_ref;
  napi_ref src_ref;
  char* dst;
  const char* src;
  int streaming;
  size_t pending;
  int cancelled;
} Copy;

/* A part of a call's bytes, run as one work item on libuv's pool. */
typedef struct {
  napi_async_work work;
  Copy* copy;
  size_t at;
  size_t length;
} Slice;

/* memcpy, but the destination's whole 64-byte lines written with non-temporal stores. */
static void stream_copy(void* dst, const void* src, size_t length) {
#if defined(__x86_64__)
  char* d = (char*)dst;
  const char* s = (const char*)src;
  size_t head = (64 - ((uintptr_t)d & 63)) & 63;
  if (head > length) head = length;
  memcpy(d, s, head);
  d += head;
  s += head;
  length -= head;
  for (; length >= 64; length -= 64, d += 64, s += 64) {
    __m128i a = _mm_loadu_si128((const __m128i*)s);
    __m128i b = _mm_loadu_si128((const __m128i*)(s + 16));
    __m128i c = _mm_loadu_si128((const __m128i*)(s + 32));
    __m128i e = _mm_loadu_si128((const __m128i*)(s + 48));
    _mm_stream_si128((__m128i*)d, a);
    _mm_stream_si128((__m128i*)(d + 16), b);
    _mm_stream_si128((__m128i*)(d + 32), c);
    _mm_stream_si128((__m128i*)(d + 48), e);
  }
  memcpy(d, s, length);
  /* Non-temporal stores are weakly ordered: visible before the copy is reported done. */
  _mm_sfence();
#else
  memcpy(dst, src, length);
#endif
}

static void run_slice(napi_env env, void* data) {
  (void)env;
  Slice* slice = (Slice*)data;
  Copy* c = slice->copy;
  if (c->streaming) stream_copy(c->dst + slice->at, c->src + slice->at, slice->length);
  else memcpy(c->dst + slice->at, c->src + slice->at, slice->length);
}

/* On the JS thread, per slice; the last one to finish settles the call's promise. */
static void finish_slice(napi_env env, napi_status status, void* data) {
  Slice* slice = (Slice*)data;
  Copy* c = slice->copy;
  napi_delete_async_work(env, slice->work);
  free(slice);
  if (status != napi_ok) c->cancelled = 1;
  if (--c->pending > 0) return;
  napi_value result;
  if (!c->cancelled) {
    napi_get_undefined(env, &result);
    napi_resolve_deferred(env, c->deferred, result);
  } else {
    napi_value message;
    napi_create_string_utf8(env, "host copy was cancelled", NAPI_AUTO_LENGTH, &message);
    napi_create_error(env, NULL, message, &result);
    napi_reject_deferred(env, c->deferred, result);
  }
  napi_delete_reference(env, c->dst_ref);
  napi_delete_reference(env, c->src_ref);
  free(c);
}

/* The bytes of a byte array (Uint8Array), and, where `ref` is given, a reference that keeps its buffer alive. */
static int view_bytes(napi_env env, napi_value view, const char* name, void** data, size_t* bytes, napi_ref* ref) {
  bool is_typed;
  napi_typedarray_type type;
  size_t length, offset;
  napi_value buffer;
  if (napi_is_typedarray(env, view, &is_typed) != napi_ok || !is_typed) {
    char message[64];
    snprintf(message, sizeof message, "host copy: %s must be a typed array", name);
    napi_throw_type_error(env, NULL, message);
    return 0;
  }
  napi_get_typedarray_info(env, view, &type, &length, data, &buffer, &offset);
  if (type != napi_uint8_array && type != napi_int8_array && type != napi_uint8_clamped_array) {
    napi_throw_type_error(env, NULL, "host copy: views must be byte arrays (Uint8Array)");
    return 0;
  }
  *bytes = length;
  if (ref) napi_create_reference(env, buffer, 1, ref);
  return 1;
}

/* offset and length (arguments 2 and 3, where given) and streaming (argument 4); throws and returns 0 if bad. */
static int read_range(napi_env env, size_t argc, napi_value* argv, double* offset, double* length, bool* streaming) {
  if (argc >= 5 && napi_get_value_bool(env, argv[4], streaming) != napi_ok) {
    napi_throw_type_error(env, NULL, "host copy: streaming must be a boolean");
    return 0;
  }
  if (argc >= 4 && (napi_get_value_double(env, argv[2], offset) != napi_ok || napi_get_value_double(env, argv[3], length) != napi_ok ||
                    !(*offset >= 0 && *length >= 0 && *offset + *length <= 9007199254740991.0))) {
    napi_throw_type_error(env, NULL, "host copy: offset and length must be non-negative numbers");
    return 0;
  }
  return 1;
}

static napi_value copy(napi_env env, napi_callback_info info) {
  size_t argc = 6;
  napi_value argv[6];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  if (argc != 2 && argc < 4) {
    napi_throw_type_error(env, NULL, "host copy: copy(dst, src) or copy(dst, src, offset, length[, streaming[, slices]]) with Uint8Arrays");
    return NULL;
  }
  bool streaming = false;
  double offset = 0, length = 0;
  if (!read_range(env, argc, argv, &offset, &length, &streaming)) return NULL;
  uint32_t slices = 1;
  if (argc >= 6 && (napi_get_value_uint32(env, argv[5], &slices) != napi_ok || slices < 1 || slices > 256)) {
    napi_throw_type_error(env, NULL, "host copy: slices must be an integer from 1 to 256");
    return NULL;
  }
  size_t dst_bytes, src_bytes;
  void *dst, *src;
  napi_ref dst_ref, src_ref;
  if (!view_bytes(env, argv[0], "dst", &dst, &dst_bytes, &dst_ref)) return NULL;
  if (!view_bytes(env, argv[1], "src", &src, &src_bytes, &src_ref)) {
    napi_delete_reference(env, dst_ref);
    return NULL;
  }
  if (argc == 2 && dst_bytes != src_bytes) {
    char message[128];
    snprintf(message, sizeof message, "host copy: dst has %zu bytes, src %zu; they must be equal", dst_bytes, src_bytes);
    napi_delete_reference(env, dst_ref);
    napi_delete_reference(env, src_ref);
    napi_throw_range_error(env, NULL, message);
    return NULL;
  }
  Copy* c = (Copy*)calloc(1, sizeof(Copy));
  c->dst_ref = dst_ref;
  c->src_ref = src_ref;
  c->dst = (char*)dst + (size_t)offset;
  c->src = (const char*)src + (size_t)offset;
  c->streaming = streaming;
  size_t bytes = argc >= 4 ? (size_t)length : src_bytes;
  /* Slices end on 64-byte lines (two threads never write one cache line); the last may be short. */
  size_t step = (bytes / slices + 63) & ~(size_t)63;
  if (step == 0) step = 64;
  size_t count = bytes == 0 ? 1 : (bytes + step - 1) / step;
  c->pending = count;
  napi_value promise, name;
  napi_create_promise(env, &c->deferred, &promise);
  napi_create_string_utf8(env, "syncopate host copy", NAPI_AUTO_LENGTH, &name);
  for (size_t i = 0; i < count; i++) {
    Slice* slice = (Slice*)calloc(1, sizeof(Slice));
    slice->copy = c;
    slice->at = i * step;
    slice->length = bytes == 0 ? 0 : (i + 1 == count ? bytes - slice->at : step);
    napi_create_async_work(env, NULL, name, run_slice, finish_slice, slice, &slice->work);
    napi_queue_async_work(env, slice->work);
  }
  return promise;
}

static napi_value copy_sync(napi_env env, napi_callback_info info) {
  size_t argc = 5;
  napi_value argv[5];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  if (argc < 4) {
    napi_throw_type_error(env, NULL, "host copy: copySync(dst, src, offset, length[, streaming]) with Uint8Arrays");
    return NULL;
  }
  bool streaming = false;
  double offset = 0, length = 0;
  if (!read_range(env, argc, argv, &offset, &length, &streaming)) return NULL;
  size_t dst_bytes, src_bytes;
  void *dst, *src;
  if (!view_bytes(env, argv[0], "dst", &dst, &dst_bytes, NULL) || !view_bytes(env, argv[1], "src", &src, &src_bytes, NULL)) return NULL;
  if (streaming) stream_copy((char*)dst + (size_t)offset, (const char*)src + (size_t)offset, (size_t)length);
  else memcpy((char*)dst + (size_t)offset, (const char*)src + (size_t)offset, (size_t)length);
  return NULL;
}

NAPI_MODULE_INIT() {
  napi_value fn;
  napi_create_function(env, "copy", NAPI_AUTO_LENGTH, copy, NULL, &fn);
  napi_set_named_property(env, exports, "copy", fn);
  napi_create_function(env, "copySync", NAPI_AUTO_LENGTH, copy_sync, NULL, &fn);
  napi_set_named_property(env, exports, "copySync", fn);
  return exports;
}
