/*
 * MPI point-to-point for ranks run as processes (`mpirun -n P node app.mjs`): chunks go from one
 * process's mapped WebGPU staging range to another's, by MPI_Isend / MPI_Irecv straight from and
 * into that mapped memory. One progress thread per process owns MPI: it initialises it, posts what
 * the JS thread queued, polls the requests and settles each call's promise through a thread-safe
 * function, so the JS thread only queues and never waits inside MPI (src/mpi/process-group.ts).
 *
 * init(): {rank, size, host, tagUpperBound, version}, once MPI is initialised (blocks until then).
 * send(range, bytes, peer, tag, id) / receive(range, bytes, peer, tag, id): Promise<void>: the first
 *   `bytes` of `range` to / from process `peer` as message `tag`. A range is a byte view, or a pair
 *   [head, tail] of views into one mapped range (the anchors of src/host-copy.ts: getMappedRange
 *   refuses a range past what was mapped, so the pair proves every byte between is mapped). Checked
 *   before anything is posted (TypeError, RangeError with code ERR_SYNCOPATE_MPI_ARGUMENT); the views'
 *   buffers are referenced until the request is complete.
 * cancel(id): asks the progress thread to MPI_Cancel operation `id`; its promise then settles once
 *   the request is complete or cancelled (rejected with code ERR_SYNCOPATE_MPI_CANCELLED), never
 *   before: a receive must not write into a range JS may have unmapped.
 * allGather(view, id): Promise<Uint8Array[]>: every process's bytes (any length each) in rank order.
 * barrier(id): Promise<void>.
 * abort(code): MPI_Abort(MPI_COMM_WORLD, code), from the progress thread; does not return.
 * finalize(): Promise<void>: active requests cancelled and waited for, queued ones rejected (code
 *   ERR_SYNCOPATE_MPI_CLOSED), then MPI_Finalize, and the thread ends.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <mpi.h>
#include <node_api.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <time.h>
#include <unistd.h>

#define ARGUMENT_ERROR "ERR_SYNCOPATE_MPI_ARGUMENT"
#define CANCELLED "ERR_SYNCOPATE_MPI_CANCELLED"
#define CLOSED "ERR_SYNCOPATE_MPI_CLOSED"
#define SIZE_MISMATCH "ERR_SYNCOPATE_MPI_SIZE"
#define MPI_FAILED "ERR_SYNCOPATE_MPI"
/* 2^53 - 1: every integer up to it is exact in a double. */
#define MAX_SAFE_INTEGER 9007199254740991.0

typedef enum { OP_SEND, OP_RECEIVE, OP_GATHER, OP_BARRIER, OP_FINALIZE } Kind;

/* One call: built on the JS thread, owned by the progress thread from queueing to settling. */
typedef struct Op {
  struct Op* next;
  Kind kind;
  double id;
  napi_deferred deferred;
  napi_ref refs[2];
  size_t ref_count;
  char* data;
  int bytes;
  int peer;
  int tag;
  /* allGather: this process's bytes (a copy), then every length, where each starts, and all bytes. */
  char* mine;
  int* counts;
  int* displs;
  char* gathered;
  int phase;
  MPI_Request request;
  /* The outcome: code NULL when done; else the error's code and message. */
  const char* code;
  char message[MPI_MAX_ERROR_STRING + 160];
  int received;
} Op;

enum { NOT_STARTED, STARTING, RUNNING, FAILED, FINALIZED };

static struct {
  pthread_mutex_t lock;
  pthread_cond_t wake;
  pthread_t thread;
  int state;
  char init_error[MPI_MAX_ERROR_STRING + 160];
  /* Queued by the JS thread, under `lock`. */
  Op* incoming_head;
  Op* incoming_tail;
  double* cancels;
  size_t cancel_count, cancel_capacity;
  Op* finalize;
  int abort_asked, abort_code;
  /* Set (under lock) when anything above was queued; read without it by the spinning thread. */
  int news;
  /* Facts from init. */
  int rank, size, tag_ub;
  char host[MPI_MAX_PROCESSOR_NAME + 1];
  char version[MPI_MAX_LIBRARY_VERSION_STRING + 1];
  /* JS thread only. */
  napi_threadsafe_function tsfn;
  size_t pending;
} g = {.lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER};

/* ---- progress thread ---- */

/* Requests posted and not yet complete, and their operations, index for index. */
static MPI_Request* active_requests;
static Op** active_ops;
static int active_count, active_capacity;
static int* done_indices;
static MPI_Status* done_statuses;
/* Set once finalize() began: what completes cancelled was closed, not timed out. */
static int closing;

static void fail(Op* op, const char* code, const char* what, int error) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(error, text, &length) != MPI_SUCCESS) snprintf(text, sizeof text, "MPI error %d", error);
  op->code = code;
  snprintf(op->message, sizeof op->message, "%s: %s", what, text);
}

/* Hands `op` to the JS thread, which settles its promise and frees it. */
static void settle(Op* op) { napi_call_threadsafe_function(g.tsfn, op, napi_tsfn_nonblocking); }

static void activate(Op* op) {
  if (active_count == active_capacity) {
    active_capacity = active_capacity ? 2 * active_capacity : 64;
    active_requests = realloc(active_requests, active_capacity * sizeof *active_requests);
    active_ops = realloc(active_ops, active_capacity * sizeof *active_ops);
    done_indices = realloc(done_indices, active_capacity * sizeof *done_indices);
    done_statuses = realloc(done_statuses, active_capacity * sizeof *done_statuses);
  }
  active_requests[active_count] = op->request;
  active_ops[active_count++] = op;
}

static void post(Op* op) {
  int rc = MPI_SUCCESS;
  const char* what = "";
  switch (op->kind) {
    case OP_SEND:
      rc = MPI_Isend(op->data, op->bytes, MPI_BYTE, op->peer, op->tag, MPI_COMM_WORLD, &op->request);
      what = "MPI_Isend";
      break;
    case OP_RECEIVE:
      rc = MPI_Irecv(op->data, op->bytes, MPI_BYTE, op->peer, op->tag, MPI_COMM_WORLD, &op->request);
      what = "MPI_Irecv";
      break;
    case OP_GATHER:
      op->counts = calloc(g.size, sizeof(int));
      /* Every length first; the bytes follow in a second phase (next_phase). */
      rc = MPI_Iallgather(&op->bytes, 1, MPI_INT, op->counts, 1, MPI_INT, MPI_COMM_WORLD, &op->request);
      what = "MPI_Iallgather";
      break;
    case OP_BARRIER:
      rc = MPI_Ibarrier(MPI_COMM_WORLD, &op->request);
      what = "MPI_Ibarrier";
      break;
    case OP_FINALIZE:
      break;
  }
  if (rc != MPI_SUCCESS) {
    fail(op, MPI_FAILED, what, rc);
    settle(op);
    return;
  }
  activate(op);
}

/* allGather's second phase, once every length is known: 1 when posted again, 0 when settled. */
static int next_phase(Op* op) {
  if (op->kind != OP_GATHER || op->phase != 0) return 0;
  op->phase = 1;
  op->displs = calloc(g.size, sizeof(int));
  long long total = 0;
  for (int i = 0; i < g.size; i++) {
    op->displs[i] = (int)total;
    total += op->counts[i];
  }
  if (total > INT_MAX) {
    op->code = MPI_FAILED;
    snprintf(op->message, sizeof op->message, "allGather: %lld bytes in all, more than one gather holds (2^31 - 1)", total);
    return 0;
  }
  op->gathered = malloc(total > 0 ? (size_t)total : 1);
  int rc = MPI_Iallgatherv(op->mine, op->bytes, MPI_BYTE, op->gathered, op->counts, op->displs, MPI_BYTE, MPI_COMM_WORLD, &op->request);
  if (rc != MPI_SUCCESS) {
    fail(op, MPI_FAILED, "MPI_Iallgatherv", rc);
    return 0;
  }
  activate(op);
  return 1;
}

/* The outcome of a request that completed with `status` (its error already `error`). */
static void complete(Op* op, MPI_Status* status, int error) {
  if (error != MPI_SUCCESS) {
    fail(op, MPI_FAILED, op->kind == OP_SEND ? "send" : op->kind == OP_RECEIVE ? "receive" : op->kind == OP_GATHER ? "allGather" : "barrier", error);
    settle(op);
    return;
  }
  if (op->kind == OP_SEND || op->kind == OP_RECEIVE) {
    int cancelled = 0;
    MPI_Test_cancelled(status, &cancelled);
    if (cancelled) {
      op->code = closing ? CLOSED : CANCELLED;
      snprintf(op->message, sizeof op->message, "%s cancelled%s", op->kind == OP_SEND ? "send" : "receive", closing ? " by finalize()" : "");
    } else if (op->kind == OP_RECEIVE) {
      MPI_Get_count(status, MPI_BYTE, &op->received);
      if (op->received != op->bytes) {
        op->code = SIZE_MISMATCH;
        snprintf(op->message, sizeof op->message, "received %d bytes, expected %d", op->received, op->bytes);
      }
    }
  }
  if (op->code == NULL && next_phase(op)) return;
  settle(op);
}

/* Tests every active request once; settles those complete. Returns how many were. */
static int poll_active(void) {
  int count = 0;
  int rc = MPI_Testsome(active_count, active_requests, &count, done_indices, done_statuses);
  if (count == MPI_UNDEFINED || count == 0) return 0;
  Op** done = malloc(count * sizeof *done);
  int* errors = malloc(count * sizeof *errors);
  MPI_Status* statuses = malloc(count * sizeof *statuses);
  for (int i = 0; i < count; i++) {
    done[i] = active_ops[done_indices[i]];
    statuses[i] = done_statuses[i];
    errors[i] = rc == MPI_ERR_IN_STATUS ? done_statuses[i].MPI_ERROR : rc;
  }
  /* Compact first: completing an allGather's first phase activates it again. */
  for (int i = 0; i < count; i++) active_ops[done_indices[i]] = NULL;
  int kept = 0;
  for (int i = 0; i < active_count; i++) {
    if (active_ops[i] == NULL) continue;
    active_requests[kept] = active_requests[i];
    active_ops[kept++] = active_ops[i];
  }
  active_count = kept;
  for (int i = 0; i < count; i++) complete(done[i], &statuses[i], errors[i]);
  free(done);
  free(errors);
  free(statuses);
  return count;
}

/*
 * Polls before this many fruitless tests in a row are spun (sched_yield between them); after them the
 * thread waits between tests, from BACKOFF_MIN_NS doubling up to BACKOFF_MAX_NS, and wakes at once
 * for a new operation. A spinning thread per process took the cores that lavapipe's workers and the
 * other processes needed: three processes on two cores stalled for seconds (mpi-run.test.ts).
 */
#define SPIN_POLLS 2000
#define BACKOFF_MIN_NS 2000L
#define BACKOFF_MAX_NS 200000L

static void back_off(unsigned idle_polls) {
  if (idle_polls < SPIN_POLLS) {
    sched_yield();
    return;
  }
  long wait_ns = BACKOFF_MIN_NS;
  for (unsigned i = SPIN_POLLS; i < idle_polls && wait_ns < BACKOFF_MAX_NS; i++) wait_ns *= 2;
  if (wait_ns > BACKOFF_MAX_NS) wait_ns = BACKOFF_MAX_NS;
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_nsec += wait_ns;
  if (until.tv_nsec >= 1000000000L) {
    until.tv_sec += 1;
    until.tv_nsec -= 1000000000L;
  }
  pthread_mutex_lock(&g.lock);
  if (!g.news) pthread_cond_timedwait(&g.wake, &g.lock, &until);
  pthread_mutex_unlock(&g.lock);
}

static void cancel_active(double id) {
  for (int i = 0; i < active_count; i++) {
    Op* op = active_ops[i];
    /* Collectives cannot be cancelled (MPI 3.1, 5.12): they run on. */
    if (op->id == id && (op->kind == OP_SEND || op->kind == OP_RECEIVE)) MPI_Cancel(&active_requests[i]);
  }
}

static void finalize_now(Op* finalize) {
  closing = 1;
  for (int i = 0; i < active_count; i++)
    if (active_ops[i]->kind == OP_SEND || active_ops[i]->kind == OP_RECEIVE) MPI_Cancel(&active_requests[i]);
  /* Settled only once complete or cancelled: nothing may write into a range after close. */
  while (active_count > 0) {
    poll_active();
    sched_yield();
  }
  pthread_mutex_lock(&g.lock);
  Op* queued = g.incoming_head;
  g.incoming_head = g.incoming_tail = NULL;
  pthread_mutex_unlock(&g.lock);
  while (queued) {
    Op* next = queued->next;
    queued->code = CLOSED;
    snprintf(queued->message, sizeof queued->message, "the process group was closed before this operation was posted");
    settle(queued);
    queued = next;
  }
  int rc = MPI_Finalize();
  if (rc != MPI_SUCCESS) fail(finalize, MPI_FAILED, "MPI_Finalize", rc);
  pthread_mutex_lock(&g.lock);
  g.state = FINALIZED;
  pthread_mutex_unlock(&g.lock);
  settle(finalize);
}

static void init_mpi(void) {
  /*
   * Open MPI's plugins (mca_*.so) may resolve libmpi's symbols globally, and Node loads an addon
   * (and with it libmpi) RTLD_LOCAL: promote the loaded libmpi to global before MPI_Init_thread.
   * (Debian's and Ubuntu's plugins link libmpi themselves and work without; a plain build may not.)
   */
  if (dlopen("libmpi.so.40", RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD) == NULL) dlopen("libmpi.so", RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD);
  char version[MPI_MAX_LIBRARY_VERSION_STRING + 1] = "";
  int length = 0;
  MPI_Get_library_version(version, &length);
  version[strcspn(version, "\n")] = '\0';
  int provided = 0;
  int rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided);
  pthread_mutex_lock(&g.lock);
  if (rc != MPI_SUCCESS) {
    g.state = FAILED;
    snprintf(g.init_error, sizeof g.init_error, "MPI_Init_thread failed (error %d)", rc);
  } else {
    /* Errors come back as codes and reject one promise, rather than end the job. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &g.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g.size);
    int* tag_ub = NULL;
    int found = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &found);
    g.tag_ub = found && tag_ub ? *tag_ub : 32767;
    MPI_Get_processor_name(g.host, &length);
    memcpy(g.version, version, sizeof version);
    g.state = RUNNING;
  }
  pthread_cond_broadcast(&g.wake);
  pthread_mutex_unlock(&g.lock);
}

static void* progress(void* unused) {
  (void)unused;
  init_mpi();
  if (g.state != RUNNING) return NULL;
  double* cancels = NULL;
  size_t cancel_capacity = 0;
  unsigned idle_polls = 0;
  for (;;) {
    Op* incoming = NULL;
    size_t cancel_count = 0;
    Op* finalize = NULL;
    int abort_asked = 0, abort_code = 0;
    if (__atomic_load_n(&g.news, __ATOMIC_ACQUIRE) || active_count == 0) {
      pthread_mutex_lock(&g.lock);
      while (!g.news && active_count == 0) pthread_cond_wait(&g.wake, &g.lock);
      incoming = g.incoming_head;
      g.incoming_head = g.incoming_tail = NULL;
      if (g.cancel_count > cancel_capacity) {
        cancel_capacity = g.cancel_capacity;
        cancels = realloc(cancels, cancel_capacity * sizeof *cancels);
      }
      memcpy(cancels, g.cancels, g.cancel_count * sizeof *cancels);
      cancel_count = g.cancel_count;
      g.cancel_count = 0;
      finalize = g.finalize;
      abort_asked = g.abort_asked;
      abort_code = g.abort_code;
      __atomic_store_n(&g.news, 0, __ATOMIC_RELEASE);
      pthread_mutex_unlock(&g.lock);
    }
    if (abort_asked) MPI_Abort(MPI_COMM_WORLD, abort_code);
    int incoming_posted = incoming != NULL;
    while (incoming) {
      Op* next = incoming->next;
      post(incoming);
      incoming = next;
    }
    for (size_t i = 0; i < cancel_count; i++) cancel_active(cancels[i]);
    if (finalize) {
      finalize_now(finalize);
      break;
    }
    if (active_count > 0) {
      idle_polls = poll_active() > 0 || incoming_posted ? 0 : idle_polls + 1;
      back_off(idle_polls);
    }
  }
  free(cancels);
  napi_release_threadsafe_function(g.tsfn, napi_tsfn_release);
  return NULL;
}

/* ---- JS thread ---- */

static void queue_locked(Op* op) {
  op->next = NULL;
  if (g.incoming_tail) g.incoming_tail->next = op;
  else g.incoming_head = op;
  g.incoming_tail = op;
}

static void wake_locked(void) {
  __atomic_store_n(&g.news, 1, __ATOMIC_RELEASE);
  pthread_cond_broadcast(&g.wake);
}

static void free_op(Op* op) {
  free(op->mine);
  free(op->counts);
  free(op->displs);
  free(op->gathered);
  free(op);
}

static napi_value error_value(napi_env env, Op* op) {
  napi_value code, message, error, received;
  napi_create_string_utf8(env, op->code, NAPI_AUTO_LENGTH, &code);
  napi_create_string_utf8(env, op->message, NAPI_AUTO_LENGTH, &message);
  napi_create_error(env, code, message, &error);
  if (strcmp(op->code, SIZE_MISMATCH) == 0) {
    napi_create_int32(env, op->received, &received);
    napi_set_named_property(env, error, "received", received);
  }
  return error;
}

static napi_value gather_value(napi_env env, Op* op) {
  napi_value list, all, view;
  void* data = NULL;
  size_t total = g.size > 0 ? (size_t)op->displs[g.size - 1] + op->counts[g.size - 1] : 0;
  napi_create_arraybuffer(env, total, &data, &all);
  if (total > 0) memcpy(data, op->gathered, total);
  napi_create_array_with_length(env, g.size, &list);
  for (int i = 0; i < g.size; i++) {
    napi_create_typedarray(env, napi_uint8_array, op->counts[i], all, op->displs[i], &view);
    napi_set_element(env, list, i, view);
  }
  return list;
}

/* On the JS thread: settles `op`'s promise and frees it. */
static void settle_js(napi_env env, napi_value callback, void* context, void* data) {
  (void)callback;
  (void)context;
  Op* op = (Op*)data;
  if (env != NULL) {
    napi_value value;
    if (op->code != NULL) napi_reject_deferred(env, op->deferred, error_value(env, op));
    else {
      if (op->kind == OP_GATHER) value = gather_value(env, op);
      else napi_get_undefined(env, &value);
      napi_resolve_deferred(env, op->deferred, value);
    }
    for (size_t i = 0; i < op->ref_count; i++) napi_delete_reference(env, op->refs[i]);
    if (op->kind == OP_FINALIZE) pthread_join(g.thread, NULL);
    /* With nothing in flight the thread-safe function does not keep the process alive. */
    if (--g.pending == 0 && op->kind != OP_FINALIZE) napi_unref_threadsafe_function(env, g.tsfn);
  }
  free_op(op);
}

static void throw_argument(napi_env env, const char* message) { napi_throw_type_error(env, ARGUMENT_ERROR, message); }
static void throw_range(napi_env env, const char* message) { napi_throw_range_error(env, ARGUMENT_ERROR, message); }

/* Throws unless MPI runs and is not closing; returns whether it does. */
static int running(napi_env env, const char* call) {
  pthread_mutex_lock(&g.lock);
  int state = g.state, closing = g.finalize != NULL;
  pthread_mutex_unlock(&g.lock);
  if (state == RUNNING && !closing) return 1;
  char message[160];
  snprintf(message, sizeof message, "mpi transport: %s after %s", call, state == FINALIZED || closing ? "finalize()" : "a failed or missing init()");
  napi_throw_error(env, CLOSED, message);
  return 0;
}

/* A range the caller mapped, and the views whose buffers keep it alive while a request runs. */
typedef struct {
  char* data;
  size_t bytes;
  size_t views;
  napi_value buffers[2];
} Range;

/* A byte view's start, length and buffer; throws and returns 0 if `value` is not one. */
static int byte_view(napi_env env, napi_value value, char** data, size_t* bytes, napi_value* buffer) {
  bool is_typed = false;
  napi_typedarray_type type;
  size_t offset;
  void* start;
  if (napi_is_typedarray(env, value, &is_typed) != napi_ok || !is_typed ||
      napi_get_typedarray_info(env, value, &type, bytes, &start, buffer, &offset) != napi_ok ||
      (type != napi_uint8_array && type != napi_int8_array && type != napi_uint8_clamped_array)) {
    throw_argument(env, "mpi transport: a range must be a byte view (Uint8Array) or a pair [head, tail] of them");
    return 0;
  }
  bool detached = false;
  napi_is_detached_arraybuffer(env, *buffer, &detached);
  if (detached) {
    throw_range(env, "mpi transport: a range is a detached view (was it unmapped?)");
    return 0;
  }
  *data = (char*)start;
  return 1;
}

/* `value` as a range: a byte view, or [head, tail] of one mapped range. Throws and returns 0 if neither. */
static int read_range(napi_env env, napi_value value, Range* range) {
  bool is_array = false;
  napi_is_array(env, value, &is_array);
  if (!is_array) {
    range->views = 1;
    return byte_view(env, value, &range->data, &range->bytes, &range->buffers[0]);
  }
  uint32_t count = 0;
  napi_get_array_length(env, value, &count);
  if (count != 2) {
    throw_argument(env, "mpi transport: a range as a pair must be [head, tail]");
    return 0;
  }
  napi_value head, tail;
  char *head_data, *tail_data;
  size_t head_bytes, tail_bytes;
  napi_get_element(env, value, 0, &head);
  napi_get_element(env, value, 1, &tail);
  if (!byte_view(env, head, &head_data, &head_bytes, &range->buffers[0]) || !byte_view(env, tail, &tail_data, &tail_bytes, &range->buffers[1])) return 0;
  if (head_bytes == 0 || tail_bytes == 0 || tail_data < head_data) {
    throw_range(env, "mpi transport: a range's head and tail must be non-empty, the tail not before the head");
    return 0;
  }
  range->views = 2;
  range->data = head_data;
  range->bytes = (size_t)(tail_data - head_data) + tail_bytes;
  return 1;
}

/* `value` as an integer in [low, high]; throws and returns 0 if not. */
static int read_integer(napi_env env, napi_value value, const char* name, double low, double high, double* out) {
  double x;
  if (napi_get_value_double(env, value, &x) != napi_ok || !(x >= low && x <= high && x == (double)(int64_t)x)) {
    char message[160];
    snprintf(message, sizeof message, "mpi transport: %s must be an integer from %.0f to %.0f", name, low, high);
    throw_range(env, message);
    return 0;
  }
  *out = x;
  return 1;
}

static int read_id(napi_env env, napi_value value, double* id) { return read_integer(env, value, "id", 0, MAX_SAFE_INTEGER, id); }

/* Queues `op` for the progress thread and returns its promise. */
static napi_value enqueue(napi_env env, Op* op) {
  napi_value promise;
  napi_create_promise(env, &op->deferred, &promise);
  if (g.pending++ == 0) napi_ref_threadsafe_function(env, g.tsfn);
  pthread_mutex_lock(&g.lock);
  if (op->kind == OP_FINALIZE) g.finalize = op;
  else queue_locked(op);
  wake_locked();
  pthread_mutex_unlock(&g.lock);
  return promise;
}

/* send / receive (range, bytes, peer, tag, id), checked against the range and the job. */
static napi_value point_to_point(napi_env env, napi_callback_info info, Kind kind) {
  const char* call = kind == OP_SEND ? "send" : "receive";
  size_t argc = 5;
  napi_value argv[5];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  if (!running(env, call)) return NULL;
  if (argc < 5) {
    throw_argument(env, kind == OP_SEND ? "mpi transport: send(range, bytes, peer, tag, id)" : "mpi transport: receive(range, bytes, peer, tag, id)");
    return NULL;
  }
  Range range;
  double bytes, peer, tag, id;
  if (!read_range(env, argv[0], &range) || !read_integer(env, argv[1], "bytes", 0, INT_MAX, &bytes) ||
      !read_integer(env, argv[2], "peer", 0, g.size - 1, &peer) || !read_integer(env, argv[3], "tag", 0, g.tag_ub, &tag) || !read_id(env, argv[4], &id))
    return NULL;
  if (bytes > (double)range.bytes) {
    char message[160];
    snprintf(message, sizeof message, "mpi transport: %s of %.0f bytes runs past its range of %zu bytes", call, bytes, range.bytes);
    throw_range(env, message);
    return NULL;
  }
  Op* op = calloc(1, sizeof(Op));
  op->kind = kind;
  op->id = id;
  op->data = range.data;
  op->bytes = (int)bytes;
  op->peer = (int)peer;
  op->tag = (int)tag;
  for (size_t v = 0; v < range.views; v++) napi_create_reference(env, range.buffers[v], 1, &op->refs[op->ref_count++]);
  return enqueue(env, op);
}

static napi_value send_call(napi_env env, napi_callback_info info) { return point_to_point(env, info, OP_SEND); }
static napi_value receive_call(napi_env env, napi_callback_info info) { return point_to_point(env, info, OP_RECEIVE); }

static napi_value all_gather(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  if (!running(env, "allGather")) return NULL;
  char* data;
  size_t bytes;
  napi_value buffer;
  double id;
  if (argc < 2) {
    throw_argument(env, "mpi transport: allGather(view, id)");
    return NULL;
  }
  if (!byte_view(env, argv[0], &data, &bytes, &buffer) || !read_id(env, argv[1], &id)) return NULL;
  if (bytes > INT_MAX) {
    throw_range(env, "mpi transport: allGather's view must be under 2 GiB");
    return NULL;
  }
  Op* op = calloc(1, sizeof(Op));
  op->kind = OP_GATHER;
  op->id = id;
  op->bytes = (int)bytes;
  /* A copy: the caller may reuse its view at once. */
  op->mine = malloc(bytes > 0 ? bytes : 1);
  if (bytes > 0) memcpy(op->mine, data, bytes);
  return enqueue(env, op);
}

static napi_value barrier_call(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  if (!running(env, "barrier")) return NULL;
  double id;
  if (argc < 1) {
    throw_argument(env, "mpi transport: barrier(id)");
    return NULL;
  }
  if (!read_id(env, argv[0], &id)) return NULL;
  Op* op = calloc(1, sizeof(Op));
  op->kind = OP_BARRIER;
  op->id = id;
  return enqueue(env, op);
}

static napi_value cancel_call(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  double id;
  if (argc < 1) {
    throw_argument(env, "mpi transport: cancel(id)");
    return NULL;
  }
  if (!read_id(env, argv[0], &id)) return NULL;
  pthread_mutex_lock(&g.lock);
  if (g.state == RUNNING) {
    if (g.cancel_count == g.cancel_capacity) {
      g.cancel_capacity = g.cancel_capacity ? 2 * g.cancel_capacity : 16;
      g.cancels = realloc(g.cancels, g.cancel_capacity * sizeof *g.cancels);
    }
    g.cancels[g.cancel_count++] = id;
    wake_locked();
  }
  pthread_mutex_unlock(&g.lock);
  return NULL;
}

static napi_value finalize_call(napi_env env, napi_callback_info info) {
  (void)info;
  if (!running(env, "finalize")) return NULL;
  Op* op = calloc(1, sizeof(Op));
  op->kind = OP_FINALIZE;
  return enqueue(env, op);
}

static napi_value abort_call(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  int32_t code = 1;
  if (argc >= 1) napi_get_value_int32(env, argv[0], &code);
  fflush(stdout);
  fflush(stderr);
  pthread_mutex_lock(&g.lock);
  int state = g.state;
  if (state == RUNNING) {
    g.abort_asked = 1;
    g.abort_code = code;
    wake_locked();
  }
  pthread_mutex_unlock(&g.lock);
  if (state == RUNNING) {
    /* MPI_Abort ends this process too; if the thread is stuck (in MPI_Finalize), call it here. */
    struct timespec step = {0, 10 * 1000 * 1000};
    for (int i = 0; i < 500; i++) nanosleep(&step, NULL);
    MPI_Abort(MPI_COMM_WORLD, code);
  }
  /* No MPI to end the job through: a non-zero exit makes the launcher end the others. */
  _exit(code != 0 ? code : 1);
  return NULL;
}

static napi_value init_call(napi_env env, napi_callback_info info) {
  (void)info;
  pthread_mutex_lock(&g.lock);
  if (g.state == NOT_STARTED) {
    g.state = STARTING;
    pthread_mutex_unlock(&g.lock);
    napi_value name;
    napi_create_string_utf8(env, "syncopate mpi transport", NAPI_AUTO_LENGTH, &name);
    napi_create_threadsafe_function(env, NULL, NULL, name, 0, 1, NULL, NULL, NULL, settle_js, &g.tsfn);
    napi_unref_threadsafe_function(env, g.tsfn);
    pthread_mutex_lock(&g.lock);
    if (pthread_create(&g.thread, NULL, progress, NULL) != 0) {
      g.state = FAILED;
      snprintf(g.init_error, sizeof g.init_error, "could not start the progress thread");
    }
  }
  while (g.state == STARTING) pthread_cond_wait(&g.wake, &g.lock);
  int state = g.state;
  pthread_mutex_unlock(&g.lock);
  if (state == FAILED) {
    napi_throw_error(env, "ERR_SYNCOPATE_MPI_INIT", g.init_error);
    return NULL;
  }
  if (state == FINALIZED) {
    napi_throw_error(env, CLOSED, "mpi transport: init() after finalize(): MPI cannot start twice in one process");
    return NULL;
  }
  napi_value result, value;
  napi_create_object(env, &result);
  napi_create_int32(env, g.rank, &value);
  napi_set_named_property(env, result, "rank", value);
  napi_create_int32(env, g.size, &value);
  napi_set_named_property(env, result, "size", value);
  napi_create_string_utf8(env, g.host, NAPI_AUTO_LENGTH, &value);
  napi_set_named_property(env, result, "host", value);
  napi_create_int32(env, g.tag_ub, &value);
  napi_set_named_property(env, result, "tagUpperBound", value);
  napi_create_string_utf8(env, g.version, NAPI_AUTO_LENGTH, &value);
  napi_set_named_property(env, result, "version", value);
  return result;
}

NAPI_MODULE_INIT() {
  napi_value fn, version;
  /* The loader (src/mpi/addon.ts) refuses an addon of another API version. */
  napi_create_uint32(env, 1, &version);
  napi_set_named_property(env, exports, "apiVersion", version);
  struct {
    const char* name;
    napi_callback call;
  } entries[] = {{"init", init_call},       {"send", send_call},         {"receive", receive_call}, {"allGather", all_gather},
                 {"barrier", barrier_call}, {"cancel", cancel_call},     {"abort", abort_call},     {"finalize", finalize_call}};
  for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++) {
    napi_create_function(env, entries[i].name, NAPI_AUTO_LENGTH, entries[i].call, NULL, &fn);
    napi_set_named_property(env, exports, entries[i].name, fn);
  }
  return exports;
}
