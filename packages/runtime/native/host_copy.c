/*
 * Host copies off the JavaScript thread. A peer copy's bytes go from one device's mapped read-back
 * range to another's mapped upload range; on the JS thread that memcpy is the transfer's bound
 * (benchmarks/peer-copy.md: 6-11 GB/s). Here each copy runs on libuv's thread pool, so several run
 * at once and the JS thread keeps encoding and submitting meanwhile.
 *
 * copy(dst, src, offset, length[, streaming[, slices]]): Promise<void>: copies bytes [offset, offset +
 * length) of range src to the same place in range dst. A range is a byte view (Uint8Array), or a pair
 * [head, tail] of byte views into one mapped range: its bytes run from head's first to tail's last.
 * An ArrayBuffer over a mapped range counts as V8 external memory until it is unmapped, and with
 * 64 MiB or more of them held at once (two transfers' pieces, 4 MiB on each side) V8 ran major
 * collections mid-run, up to 14 ms with the JS thread stopped (benchmarks/peer-copy.md); a pair of
 * 8-byte anchors, the first and the last of the range as getMappedRange hands them out (it refuses
 * a range past what was mapped), counts 16 bytes and still bounds the copy. Every call is checked
 * against both ranges before a byte moves: offsets and lengths must be integers, within 2^53, and end
 * inside both ranges; anything else throws (TypeError, or RangeError with code
 * ERR_SYNCOPATE_HOST_COPY_RANGE) and copies nothing. The views' buffers are referenced until the copy
 * is done; the caller must keep the ranges mapped until the promise settles
 * (packages/runtime/src/host-copy.ts does).
 *
 * `slices` (an integer from 1 to 256): the bytes cut into that many parts on 64-byte lines, each a
 * work item on the pool, and the promise settled once the last is done: the JS thread settles one
 * promise a copy, however many threads run it.
 *
 * copySync(dst, src, offset, length[, streaming]): the same bytes copied on the calling (JS) thread,
 * for copies too small to pay for a hand-off to the pool and back; the same ranges and checks.
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
  napi_ref refs[4];
  size_t ref_count;
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
  for (size_t i = 0; i < c->ref_count; i++) napi_delete_reference(env, c->refs[i]);
  free(c);
}

#define ARGUMENT_ERROR "ERR_SYNCOPATE_HOST_COPY_ARGUMENT"
#define RANGE_ERROR "ERR_SYNCOPATE_HOST_COPY_RANGE"
/* 2^53 - 1: every integer up to it is exact in a double. */
#define MAX_SAFE_INTEGER 9007199254740991.0

/* A range the caller mapped, and the views whose buffers keep it alive while a copy runs. */
typedef struct {
  char* data;
  size_t bytes;
  size_t views;
  napi_value buffers[2];
} Range;

static void throw_argument(napi_env env, const char* message) { napi_throw_type_error(env, ARGUMENT_ERROR, message); }

/* A byte view's start, length and buffer; throws and returns 0 if `value` is not one. */
static int byte_view(napi_env env, napi_value value, const char* name, char** data, size_t* bytes, napi_value* buffer) {
  bool is_typed = false;
  napi_typedarray_type type;
  size_t offset;
  void* start;
  if (napi_is_typedarray(env, value, &is_typed) != napi_ok || !is_typed ||
      napi_get_typedarray_info(env, value, &type, bytes, &start, buffer, &offset) != napi_ok ||
      (type != napi_uint8_array && type != napi_int8_array && type != napi_uint8_clamped_array)) {
    char message[160];
    snprintf(message, sizeof message, "host copy: %s must be a byte view (Uint8Array) or a pair [head, tail] of them", name);
    throw_argument(env, message);
    return 0;
  }
  bool detached = false;
  napi_is_detached_arraybuffer(env, *buffer, &detached);
  if (detached) {
    char message[128];
    snprintf(message, sizeof message, "host copy: %s is a detached view (was its range unmapped?)", name);
    napi_throw_range_error(env, RANGE_ERROR, message);
    return 0;
  }
  *data = (char*)start;
  return 1;
}

/* Argument `value` as a range: a byte view, or [head, tail] of one mapped range. Throws and returns 0 if neither. */
static int read_range(napi_env env, napi_value value, const char* name, Range* range) {
  bool is_array = false;
  napi_is_array(env, value, &is_array);
  if (!is_array) {
    range->views = 1;
    return byte_view(env, value, name, &range->data, &range->bytes, &range->buffers[0]);
  }
  uint32_t count = 0;
  napi_get_array_length(env, value, &count);
  if (count != 2) {
    char message[128];
    snprintf(message, sizeof message, "host copy: %s as a pair must be [head, tail], got %u views", name, count);
    throw_argument(env, message);
    return 0;
  }
  napi_value head, tail;
  char *head_data, *tail_data;
  size_t head_bytes, tail_bytes;
  napi_get_element(env, value, 0, &head);
  napi_get_element(env, value, 1, &tail);
  if (!byte_view(env, head, name, &head_data, &head_bytes, &range->buffers[0]) ||
      !byte_view(env, tail, name, &tail_data, &tail_bytes, &range->buffers[1]))
    return 0;
  if (head_bytes == 0 || tail_bytes == 0 || tail_data < head_data) {
    char message[128];
    snprintf(message, sizeof message, "host copy: %s's head and tail must be non-empty, the tail not before the head", name);
    napi_throw_range_error(env, RANGE_ERROR, message);
    return 0;
  }
  range->views = 2;
  range->data = head_data;
  range->bytes = (size_t)(tail_data - head_data) + tail_bytes;
  return 1;
}

/* Argument `value` as a byte count: an integer from 0 to 2^53 - 1. Throws and returns 0 if not. */
static int read_count(napi_env env, napi_value value, const char* name, double* out) {
  double x;
  if (napi_get_value_double(env, value, &x) != napi_ok || !(x >= 0 && x <= MAX_SAFE_INTEGER && x == (double)(uint64_t)x)) {
    char message[128];
    snprintf(message, sizeof message, "host copy: %s must be an integer from 0 to 2^53 - 1", name);
    napi_throw_range_error(env, RANGE_ERROR, message);
    return 0;
  }
  *out = x;
  return 1;
}

/* One call's checked arguments. */
typedef struct {
  Range dst, src;
  size_t offset, length;
  bool streaming;
  uint32_t slices;
} Call;

/*
 * (dst, src, offset, length[, streaming[, slices]]) checked against both ranges: [offset, offset +
 * length) must lie inside each. Throws and returns 0 if anything is off; nothing has been copied then.
 */
static int read_call(napi_env env, size_t argc, napi_value* argv, int with_slices, Call* call) {
  if (argc < 4) {
    throw_argument(env, with_slices ? "host copy: copy(dst, src, offset, length[, streaming[, slices]])"
                                    : "host copy: copySync(dst, src, offset, length[, streaming])");
    return 0;
  }
  double offset, length;
  if (!read_range(env, argv[0], "dst", &call->dst) || !read_range(env, argv[1], "src", &call->src) ||
      !read_count(env, argv[2], "offset", &offset) || !read_count(env, argv[3], "length", &length))
    return 0;
  call->streaming = false;
  if (argc >= 5 && napi_get_value_bool(env, argv[4], &call->streaming) != napi_ok) {
    throw_argument(env, "host copy: streaming must be a boolean");
    return 0;
  }
  call->slices = 1;
  if (with_slices && argc >= 6) {
    double slices;
    if (napi_get_value_double(env, argv[5], &slices) != napi_ok || !(slices >= 1 && slices <= 256 && slices == (double)(uint32_t)slices)) {
      napi_throw_range_error(env, RANGE_ERROR, "host copy: slices must be an integer from 1 to 256");
      return 0;
    }
    call->slices = (uint32_t)slices;
  }
  const Range* ranges[2] = {&call->dst, &call->src};
  const char* names[2] = {"dst", "src"};
  for (int i = 0; i < 2; i++) {
    /* In doubles: offset + length cannot wrap there, and both are exact below 2^53. */
    if (offset + length > (double)ranges[i]->bytes) {
      char message[192];
      snprintf(message, sizeof message, "host copy: bytes [%.0f, %.0f) run past %s, a range of %zu bytes", offset, offset + length, names[i], ranges[i]->bytes);
      napi_throw_range_error(env, RANGE_ERROR, message);
      return 0;
    }
  }
  call->offset = (size_t)offset;
  call->length = (size_t)length;
  return 1;
}

static napi_value copy(napi_env env, napi_callback_info info) {
  size_t argc = 6;
  napi_value argv[6];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  Call call;
  if (!read_call(env, argc, argv, 1, &call)) return NULL;
  Copy* c = (Copy*)calloc(1, sizeof(Copy));
  const Range* ranges[2] = {&call.dst, &call.src};
  for (int i = 0; i < 2; i++)
    for (size_t v = 0; v < ranges[i]->views; v++) napi_create_reference(env, ranges[i]->buffers[v], 1, &c->refs[c->ref_count++]);
  c->dst = call.dst.data + call.offset;
  c->src = call.src.data + call.offset;
  c->streaming = call.streaming;
  size_t bytes = call.length;
  /* Slices end on 64-byte lines (two threads never write one cache line); the last may be short. */
  size_t step = (bytes / call.slices + 63) & ~(size_t)63;
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
  Call call;
  if (!read_call(env, argc, argv, 0, &call)) return NULL;
  char* dst = call.dst.data + call.offset;
  const char* src = call.src.data + call.offset;
  if (call.streaming) stream_copy(dst, src, call.length);
  else memcpy(dst, src, call.length);
  return NULL;
}

NAPI_MODULE_INIT() {
  napi_value fn, version;
  /* 2: ranges checked (this source); the loader refuses an addon built from older source. */
  napi_create_uint32(env, 2, &version);
  napi_set_named_property(env, exports, "apiVersion", version);
  napi_create_function(env, "copy", NAPI_AUTO_LENGTH, copy, NULL, &fn);
  napi_set_named_property(env, exports, "copy", fn);
  napi_create_function(env, "copySync", NAPI_AUTO_LENGTH, copy_sync, NULL, &fn);
  napi_set_named_property(env, exports, "copySync", fn);
  return exports;
}
