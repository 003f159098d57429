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
 *
 * Single copy between processes on one host (send/receive with singleCopy true, on both sides): MPI
 * carries only a descriptor (the sender's pid, its range's start, the byte count) and an ack, each on
 * a communicator of its own (duplicated at init) so that neither matches a data message or the other.
 * The receiver checks the count against its own, then reads the sender's range straight into its own
 * with process_vm_readv (Linux cross-memory attach), cut into 64-byte-aligned slices of >= 256 KiB
 * over a pool of copy threads, while the progress thread keeps polling; then it acks. The sender's
 * promise settles on the ack, so its range stays mapped while it is read. A descriptor not yet
 * received (receiver) or not yet sent (sender) can be cancelled; a copy under way or an ack awaited
 * cannot (the peer may be reading the range), so it completes first.
 * cmaToken(): Uint8Array: this process's pid, the address of a 16-byte token and the token, for a
 *   peer's cmaCheck; also allows any process to ptrace (read) this one (prctl PR_SET_PTRACER, for Yama).
 * cmaCheck(token): string: '' when process_vm_readv read that token from that process, else why not.
 * setCopyThreads(n): how many copy threads the pool starts with its first copy (default 4).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <mpi.h>
#include <node_api.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define ARGUMENT_ERROR "ERR_SYNCOPATE_MPI_ARGUMENT"
#define CANCELLED "ERR_SYNCOPATE_MPI_CANCELLED"
#define CLOSED "ERR_SYNCOPATE_MPI_CLOSED"
#define SIZE_MISMATCH "ERR_SYNCOPATE_MPI_SIZE"
#define MPI_FAILED "ERR_SYNCOPATE_MPI"
#define COPY_FAILED "ERR_SYNCOPATE_MPI_COPY"
#define REFUSED "ERR_SYNCOPATE_MPI_REFUSED"
/* 2^53 - 1: every integer up to it is exact in a double. */
#define MAX_SAFE_INTEGER 9007199254740991.0

typedef enum { OP_SEND, OP_RECEIVE, OP_GATHER, OP_BARRIER, OP_FINALIZE } Kind;

/* What a single-copy sender tells its receiver, and what the receiver answers. */
typedef struct {
  uint64_t pid;
  uint64_t address;
  uint64_t bytes;
} Descriptor;
enum { ACK_DONE = 0, ACK_SIZE = 1, ACK_COPY_FAILED = 2 };
/* Single-copy phases: the descriptor in flight (cancellable), then the ack (sender: awaited; receiver: sent). */
enum { HANDSHAKE = 0, ACKING = 1 };

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
  /* Single copy: the descriptor, the ack {status, detail}, and the copy's slices still running and first error. */
  int single_copy;
  Descriptor descriptor;
  int ack[2];
  int slices_left;
  int copy_error;
  struct Op* copied_next;
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
  /* Single copy's descriptors and acks: MPI_COMM_WORLD duplicated, so they match nothing else. */
  MPI_Comm descriptors, acks;
  /* Receives whose copy finished, for the progress thread to ack (under `lock`). */
  Op* copied;
  int copy_threads;
  char host[MPI_MAX_PROCESSOR_NAME + 1];
  char version[MPI_MAX_LIBRARY_VERSION_STRING + 1];
  /* JS thread only. */
  napi_threadsafe_function tsfn;
  size_t pending;
} g = {.lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER, .copy_threads = 4};

/* ---- progress thread ---- */

static void wake_locked_progress(void);

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
      if (op->single_copy) {
        op->descriptor = (Descriptor){(uint64_t)getpid(), (uint64_t)(uintptr_t)op->data, (uint64_t)op->bytes};
        rc = MPI_Isend(&op->descriptor, sizeof op->descriptor, MPI_BYTE, op->peer, op->tag, g.descriptors, &op->request);
        what = "MPI_Isend (single-copy descriptor)";
      } else {
        rc = MPI_Isend(op->data, op->bytes, MPI_BYTE, op->peer, op->tag, MPI_COMM_WORLD, &op->request);
        what = "MPI_Isend";
      }
      break;
    case OP_RECEIVE:
      if (op->single_copy) {
        rc = MPI_Irecv(&op->descriptor, sizeof op->descriptor, MPI_BYTE, op->peer, op->tag, g.descriptors, &op->request);
        what = "MPI_Irecv (single-copy descriptor)";
      } else {
        rc = MPI_Irecv(op->data, op->bytes, MPI_BYTE, op->peer, op->tag, MPI_COMM_WORLD, &op->request);
        what = "MPI_Irecv";
      }
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

/* ---- single copy ---- */

#define MIN_SLICE_BYTES (256 << 10)

typedef struct {
  Op* op;
  char* local;
  uint64_t remote;
  size_t bytes;
} Slice;

/* The copy threads and the slices queued for them. */
static struct {
  pthread_mutex_t lock;
  pthread_cond_t work;
  Slice* queue;
  size_t next, count, capacity;
  int started;
} pool = {.lock = PTHREAD_MUTEX_INITIALIZER, .work = PTHREAD_COND_INITIALIZER};

/* Receives whose copy runs (progress thread only): finalize waits for them. */
static int copies_running;

/* Reads `bytes` at `remote` in process `pid` into `local`: 0, or the errno of the first failure (a read that stops short fails). */
static int read_remote(pid_t pid, char* local, uint64_t remote, size_t bytes) {
  while (bytes > 0) {
    struct iovec into = {local, bytes}, from = {(void*)(uintptr_t)remote, bytes};
    ssize_t n = process_vm_readv(pid, &into, 1, &from, 1, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) return EFAULT;
    local += n;
    remote += (uint64_t)n;
    bytes -= (size_t)n;
  }
  return 0;
}

static void* copy_worker(void* unused) {
  (void)unused;
  for (;;) {
    pthread_mutex_lock(&pool.lock);
    while (pool.next == pool.count) pthread_cond_wait(&pool.work, &pool.lock);
    Slice slice = pool.queue[pool.next++];
    if (pool.next == pool.count) pool.next = pool.count = 0;
    pthread_mutex_unlock(&pool.lock);
    Op* op = slice.op;
    int error = __atomic_load_n(&op->copy_error, __ATOMIC_RELAXED) ? 0 : read_remote((pid_t)op->descriptor.pid, slice.local, slice.remote, slice.bytes);
    if (error) {
      int none = 0;
      __atomic_compare_exchange_n(&op->copy_error, &none, error, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
    }
    if (__atomic_sub_fetch(&op->slices_left, 1, __ATOMIC_ACQ_REL) == 0) {
      pthread_mutex_lock(&g.lock);
      op->copied_next = g.copied;
      g.copied = op;
      wake_locked_progress();
      pthread_mutex_unlock(&g.lock);
    }
  }
  return NULL;
}

/*
 * Queues the copy of a receive whose descriptor matched: only the receive's own `bytes` into its
 * own range, whatever else the descriptor says. Returns 0, or an errno if no copy thread starts.
 */
static int start_copy(Op* op) {
  size_t bytes = (size_t)op->bytes;
  int want = __atomic_load_n(&g.copy_threads, __ATOMIC_RELAXED);
  size_t threads = (size_t)want;
  size_t parts = bytes / MIN_SLICE_BYTES;
  if (parts < 1) parts = 1;
  if (parts > threads) parts = threads;
  size_t per = ((bytes + parts - 1) / parts + 63) & ~(size_t)63;
  size_t slices = (bytes + per - 1) / per;
  pthread_mutex_lock(&pool.lock);
  for (; pool.started < want; pool.started++) {
    pthread_t thread;
    if (pthread_create(&thread, NULL, copy_worker, NULL) != 0) break;
    pthread_detach(thread);
  }
  if (pool.started == 0) {
    pthread_mutex_unlock(&pool.lock);
    return EAGAIN;
  }
  if (pool.count + slices > pool.capacity) {
    pool.capacity = (pool.count + slices) * 2;
    pool.queue = realloc(pool.queue, pool.capacity * sizeof *pool.queue);
  }
  op->slices_left = (int)slices;
  for (size_t offset = 0; offset < bytes; offset += per) {
    size_t length = bytes - offset < per ? bytes - offset : per;
    pool.queue[pool.count++] = (Slice){op, op->data + offset, op->descriptor.address + offset, length};
  }
  pthread_cond_broadcast(&pool.work);
  pthread_mutex_unlock(&pool.lock);
  copies_running++;
  return 0;
}

/* A single-copy receive answers its sender; it settles once the ack is sent. */
static void send_ack(Op* op, int status, int detail) {
  op->ack[0] = status;
  op->ack[1] = detail;
  op->phase = ACKING;
  int rc = MPI_Isend(op->ack, 2, MPI_INT, op->peer, op->tag, g.acks, &op->request);
  if (rc != MPI_SUCCESS) {
    if (op->code == NULL) fail(op, MPI_FAILED, "MPI_Isend (single-copy ack)", rc);
    settle(op);
    return;
  }
  activate(op);
}

static void copy_failed(Op* op, int error) {
  op->code = COPY_FAILED;
  snprintf(op->message, sizeof op->message, "could not read %d bytes from process %d (pid %llu) with process_vm_readv: %s", op->bytes, op->peer,
           (unsigned long long)op->descriptor.pid, strerror(error));
  send_ack(op, ACK_COPY_FAILED, error);
}

/* Acks the receives whose copy finished (progress thread). */
static void drain_copied(void) {
  if (__atomic_load_n(&g.copied, __ATOMIC_ACQUIRE) == NULL) return;
  pthread_mutex_lock(&g.lock);
  Op* op = g.copied;
  g.copied = NULL;
  pthread_mutex_unlock(&g.lock);
  while (op) {
    Op* next = op->copied_next;
    copies_running--;
    int error = __atomic_load_n(&op->copy_error, __ATOMIC_ACQUIRE);
    if (error) copy_failed(op, error);
    else send_ack(op, ACK_DONE, 0);
    op = next;
  }
}

/* A single-copy send or receive whose request completed (no error, not cancelled). */
static void single_copy_step(Op* op, MPI_Status* status) {
  if (op->kind == OP_SEND && op->phase == HANDSHAKE) {
    op->phase = ACKING;
    int rc = MPI_Irecv(op->ack, 2, MPI_INT, op->peer, op->tag, g.acks, &op->request);
    if (rc != MPI_SUCCESS) {
      fail(op, MPI_FAILED, "MPI_Irecv (single-copy ack)", rc);
      settle(op);
      return;
    }
    activate(op);
    return;
  }
  if (op->kind == OP_SEND) {
    if (op->ack[0] == ACK_SIZE) {
      op->code = REFUSED;
      snprintf(op->message, sizeof op->message, "process %d expected %d bytes, this send has %d", op->peer, op->ack[1], op->bytes);
    } else if (op->ack[0] != ACK_DONE) {
      op->code = COPY_FAILED;
      snprintf(op->message, sizeof op->message, "process %d could not read this send's range with process_vm_readv: %s", op->peer, strerror(op->ack[1]));
    }
    settle(op);
    return;
  }
  if (op->phase == ACKING) {
    settle(op);
    return;
  }
  int count = 0;
  MPI_Get_count(status, MPI_BYTE, &count);
  if (count != (int)sizeof op->descriptor) {
    op->code = MPI_FAILED;
    snprintf(op->message, sizeof op->message, "single-copy descriptor of %d bytes, expected %zu (the other process runs another transport?)", count, sizeof op->descriptor);
    settle(op);
    return;
  }
  if (op->descriptor.bytes != (uint64_t)op->bytes) {
    op->code = SIZE_MISMATCH;
    op->received = op->descriptor.bytes > INT_MAX ? INT_MAX : (int)op->descriptor.bytes;
    snprintf(op->message, sizeof op->message, "received %llu bytes, expected %d", (unsigned long long)op->descriptor.bytes, op->bytes);
    send_ack(op, ACK_SIZE, op->bytes);
    return;
  }
  if (op->bytes == 0) {
    send_ack(op, ACK_DONE, 0);
    return;
  }
  int error = start_copy(op);
  if (error) copy_failed(op, error);
}

/* Whether MPI_Cancel may be asked of `op`'s request: never of a single copy past its descriptor (the peer may be reading). */
static int cancellable(Op* op) { return (op->kind == OP_SEND || op->kind == OP_RECEIVE) && !(op->single_copy && op->phase != HANDSHAKE); }

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
    } else if (op->single_copy) {
      single_copy_step(op, status);
      return;
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
 * thread waits between tests, from BACKOFF_MIN_NS doubling up to the longest wait, and wakes at once
 * for a new operation of this process (a message from another one waits for the next test). A
 * spinning thread per process took the cores that lavapipe's workers and the other processes needed:
 * three processes on two cores stalled for seconds (mpi-run.test.ts). The longest wait is
 * SYNCOPATE_MPI_POLL_WAIT_US microseconds (default 200), read at init.
 */
#define SPIN_POLLS 2000
#define BACKOFF_MIN_NS 2000L
static long backoff_max_ns = 200000L;

static void read_poll_wait(void) {
  const char* text = getenv("SYNCOPATE_MPI_POLL_WAIT_US");
  char* end = NULL;
  long us = text ? strtol(text, &end, 10) : -1;
  if (text && end && *end == '\0' && us >= 1 && us <= 100000) backoff_max_ns = us * 1000L;
}

static void back_off(unsigned idle_polls) {
  if (idle_polls < SPIN_POLLS) {
    sched_yield();
    return;
  }
  long wait_ns = BACKOFF_MIN_NS;
  for (unsigned i = SPIN_POLLS; i < idle_polls && wait_ns < backoff_max_ns; i++) wait_ns *= 2;
  if (wait_ns > backoff_max_ns) wait_ns = backoff_max_ns;
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
    if (op->id == id && cancellable(op)) MPI_Cancel(&active_requests[i]);
  }
}

static void finalize_now(Op* finalize) {
  closing = 1;
  for (int i = 0; i < active_count; i++)
    if (cancellable(active_ops[i])) MPI_Cancel(&active_requests[i]);
  /* Settled only once complete or cancelled: nothing may write into a range after close. */
  while (active_count > 0 || copies_running > 0) {
    poll_active();
    drain_copied();
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
  read_poll_wait();
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
    MPI_Comm_dup(MPI_COMM_WORLD, &g.descriptors);
    MPI_Comm_dup(MPI_COMM_WORLD, &g.acks);
    MPI_Comm_set_errhandler(g.descriptors, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(g.acks, MPI_ERRORS_RETURN);
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
    drain_copied();
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

/* A copy thread's news for the progress thread (under g.lock). */
static void wake_locked_progress(void) { wake_locked(); }

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

/* send / receive (range, bytes, peer, tag, id, singleCopy), checked against the range and the job. */
static napi_value point_to_point(napi_env env, napi_callback_info info, Kind kind) {
  const char* call = kind == OP_SEND ? "send" : "receive";
  size_t argc = 6;
  napi_value argv[6];
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
  bool single_copy = false;
  if (argc >= 6) napi_get_value_bool(env, argv[5], &single_copy);
  op->single_copy = single_copy;
  for (size_t v = 0; v < range.views; v++) napi_create_reference(env, range.buffers[v], 1, &op->refs[op->ref_count++]);
  return enqueue(env, op);
}

static napi_value send_call(napi_env env, napi_callback_info info) { return point_to_point(env, info, OP_SEND); }
static napi_value receive_call(napi_env env, napi_callback_info info) { return point_to_point(env, info, OP_RECEIVE); }

/* The token a peer reads in cmaCheck: static, so it outlives every probe. */
static unsigned char cma_token[16];

static napi_value cma_token_call(napi_env env, napi_callback_info info) {
  (void)info;
  /* Yama (ptrace_scope 1) lets only ancestors read a process; this lets the other processes of the job. EINVAL without Yama. */
  prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  uint64_t x = ((uint64_t)getpid() << 32) ^ (uint64_t)now.tv_nsec ^ ((uint64_t)now.tv_sec << 20) ^ 0x9e3779b97f4a7c15ull;
  for (size_t i = 0; i < sizeof cma_token; i++) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    cma_token[i] = (unsigned char)(x >> 24);
  }
  uint64_t head[2] = {(uint64_t)getpid(), (uint64_t)(uintptr_t)cma_token};
  napi_value buffer, view;
  void* data;
  napi_create_arraybuffer(env, sizeof head + sizeof cma_token, &data, &buffer);
  memcpy(data, head, sizeof head);
  memcpy((char*)data + sizeof head, cma_token, sizeof cma_token);
  napi_create_typedarray(env, napi_uint8_array, sizeof head + sizeof cma_token, buffer, 0, &view);
  return view;
}

static napi_value cma_check_call(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  char* data;
  size_t bytes;
  napi_value buffer, result;
  if (argc < 1) {
    throw_argument(env, "mpi transport: cmaCheck(token)");
    return NULL;
  }
  if (!byte_view(env, argv[0], &data, &bytes, &buffer)) return NULL;
  uint64_t head[2];
  unsigned char expected[sizeof cma_token], got[sizeof cma_token];
  char why[200] = "";
  if (bytes != sizeof head + sizeof expected) snprintf(why, sizeof why, "a token of %zu bytes, expected %zu", bytes, sizeof head + sizeof expected);
  else {
    memcpy(head, data, sizeof head);
    memcpy(expected, data + sizeof head, sizeof expected);
    int error = read_remote((pid_t)head[0], (char*)got, head[1], sizeof got);
    if (error) snprintf(why, sizeof why, "process_vm_readv from pid %llu: %s", (unsigned long long)head[0], strerror(error));
    else if (memcmp(got, expected, sizeof got) != 0) snprintf(why, sizeof why, "process_vm_readv from pid %llu read other bytes (another pid namespace?)", (unsigned long long)head[0]);
  }
  napi_create_string_utf8(env, why, NAPI_AUTO_LENGTH, &result);
  return result;
}

static napi_value set_copy_threads(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  double threads;
  if (argc < 1 || !read_integer(env, argv[0], "threads", 1, 64, &threads)) return NULL;
  /* Read by the progress thread when it starts a copy; the pool keeps the threads it started. */
  __atomic_store_n(&g.copy_threads, (int)threads, __ATOMIC_RELAXED);
  return NULL;
}

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
  napi_create_uint32(env, 2, &version);
  napi_set_named_property(env, exports, "apiVersion", version);
  struct {
    const char* name;
    napi_callback call;
  } entries[] = {{"init", init_call},       {"send", send_call},         {"receive", receive_call}, {"allGather", all_gather},
                 {"barrier", barrier_call}, {"cancel", cancel_call},     {"abort", abort_call},     {"finalize", finalize_call},
                 {"cmaToken", cma_token_call}, {"cmaCheck", cma_check_call}, {"setCopyThreads", set_copy_threads}};
  for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++) {
    napi_create_function(env, entries[i].name, NAPI_AUTO_LENGTH, entries[i].call, NULL, &fn);
    napi_set_named_property(env, exports, entries[i].name, fn);
  }
  return exports;
}
