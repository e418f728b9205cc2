// Binder IPC, the scheduling side (drivers/android/binder.c, Linux 6.12):
// a server process with a pool of looper threads that serve transactions.
//
// binder_transaction() from a caller picks the thread that began waiting
// last (binder_select_thread_ilocked(): proc->waiting_threads is filled
// with list_add(), so the head is the newest waiter) and queues the
// transaction on that thread's own todo list; with no thread waiting it
// goes on proc->todo for the next thread that comes back for work
// (binder_proc_transaction()). A synchronous transaction wakes the thread
// with wake_up_interruptible_sync() (WF_SYNC: select_task_rq_fair()'s
// wake_affine() may keep it on the caller's CPU, which is about to sleep)
// and the caller sleeps (S) until the reply, which wakes it the same way.
// A one-way transaction wakes the thread without WF_SYNC and the caller
// goes on; one-way transactions to a node run one at a time: while one is
// outstanding (node->has_async_transaction) the next waits on
// node->async_todo, and the thread's BC_FREE_BUFFER of the first moves it
// to proc->todo and wakes a waiting thread (binder_free_buf()).
//
// Priority, mainline: a thread going back to wait for process work takes
// the process's nice (binder_set_nice(proc->default_priority) in
// binder_thread_read()); picking up a transaction it saves its nice and
// takes the caller's when that is lower than the node's min_priority (sync
// only), else the node's min_priority (always for sync; for one-way only
// when that lowers its nice); the reply restores the saved nice
// (binder_set_nice(in_reply_to->saved_priority)) before waking the caller.
// The caller's priority is task_nice(current) at the call.
//
// Priority, Android Common Kernel (`android: true`; ACK's binder.c,
// binder_transaction_priority() and binder_do_set_priority(), the rules of
// android12-5.10 and later): a transaction carries the caller's policy and
// normal_prio (sync, from a SCHED_OTHER/BATCH/FIFO/RR caller; else the
// server process's default priority). It is applied when the transaction
// is handed to a thread: by the caller, before the wake-up, when a thread
// was waiting (binder_proc_transaction()), else by the thread taking it
// from proc->todo (binder_thread_read()). An RT caller's policy passes
// only if the node has FLAT_BINDER_FLAG_INHERIT_RT, else the thread runs
// at nice 0; the node's minimum (policy and priority) wins when it is
// higher, or equal and SCHED_FIFO. The reply wakes the caller and then
// restores the saved policy and priority (mainline restores first); the
// return to waiting restores the process's default. The server's threads are
// assumed to hold CAP_SYS_NICE (system_server, audioserver and the HALs
// do), so no RLIMIT_RTPRIO/RLIMIT_NICE cap applies. The node minimum is
// compared with the priority after the INHERIT_RT demotion, as in
// android16-6.12 (and the android14-6.1 and android12-5.10 trees read in
// session 55); an older ACK snapshot (aosp-mirror/kernel_common 000eb69e)
// and the original RT-inheritance patch compare it with the caller's
// priority, so a FIFO caller without INHERIT_RT never meets an RT node
// minimum there. After BC_REPLY the thread returns to user space (a
// preemption point) before its next read takes queued work; under a
// preemptible kernel (preempt=full, or lazy with TIF_NEED_RESCHED) the
// one-way path's BC_FREE_BUFFER (its wake-up's unlock) and the read's
// restore to the process default (the setscheduler's or set_user_nice()'s
// unlock) are preemption points too, before the thread looks at
// proc->todo. Not modelled:
// a process default priority other than SCHED_NORMAL at its nice; vendor
// hooks (android_vh_binder_*).
//
// Nested transactions: a server thread serving a transaction may call
// another process (a CallSpec's `nested`: system_server calling a HAL);
// it is then the caller, passing the priority it runs at (inherited down
// the chain), and sleeps (S) until that reply unless the call is one-way.
// A call back into a process already in the chain (which the kernel hands
// to the waiting thread of that chain, binder_transaction()'s
// transaction_stack walk) is refused at load time.
//
// Simplifications: one node per process (every transaction targets the
// same node); a transaction never targets a specific thread; RLIMIT_NICE never caps
// binder_set_nice(); the work a transaction does is CPU work in the server
// thread (capacity time at 1024 and f_max); the reply's and the buffer
// copies' CPU cost is part of the caller's and server's `run` events; the
// threads never exit or grow (the pool is as declared, all started at 0).
// That is the steady state of a libbinder pool: binder_thread_read() asks
// for a new looper (BR_SPAWN_LOOPER) whenever a thread leaves with work
// while none is waiting, up to the process's max_threads
// (ProcessState::setThreadPoolMaxThreadCount(); libbinder's default 15,
// system_server 31, SurfaceFlinger 4, HALs often 0 or 1), and pool threads
// never exit; so `threads` stands for max_threads plus the threads that
// joined the pool themselves (the main thread, startThreadPool()'s first
// looper). The pool's growth after the process starts is not modelled.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "models/kernel/binder/binder_params.h"
#include "models/kernel/task_body.h"
#include "sim/fifo.h"
#include "sim/time.h"

namespace schedlab {

class Kernel;
class BinderThread;
struct Task;

// A task that made a synchronous call and sleeps until the reply.
class BinderClient {
 public:
  virtual ~BinderClient() = default;
  // The reply came from `server` (on its CPU): wake the caller (WF_SYNC).
  virtual void binder_reply(Task& server) = 0;
};

// Told when a pool thread has done a transaction's work (its cost, nested
// call and work after), before BC_REPLY / BC_FREE_BUFFER: for a model
// whose server side does more than CPU work (SurfaceFlinger's
// EventThreadConnection::requestNextVsync(), models/devices/display.h).
class BinderWorkHook {
 public:
  virtual ~BinderWorkHook() = default;
  virtual void binder_work_done(Task& server) = 0;
  // Asked after binder_work_done() and again each time the server thread
  // wakes: true while the server must sleep (S) before it replies, as a
  // service method waiting on a condition variable does
  // (InputDispatcher::injectInputEvent() waiting for the injection's
  // result). Whoever ends the wait wakes the server thread.
  virtual bool binder_hold(Task& server) {
    (void)server;
    return false;
  }
};

class BinderProc {
 public:
  // Creates the pool's threads (started at `start`; each goes to wait for
  // work at once).
  BinderProc(Kernel& k, const BinderProcParams& params, Time start = Time::zero());
  ~BinderProc();
  const std::string& name() const { return params_.name; }
  const BinderProcParams& params() const { return params_; }
  Kernel& kernel() { return k_; }
  // binder_transaction() by the running task `caller`: `call`'s work for a
  // pool thread (its cost, its nested call, its work after that).
  // Synchronous when `client` is given (the caller then blocks until
  // client->binder_reply()); one-way otherwise. `on_done`, if given, hears
  // when the server thread has done the work.
  void transact(Task& caller, const CallSpec& call, BinderClient* client, BinderWorkHook* on_done = nullptr);
  // The other processes, for nested calls (by name; nullptr if unknown).
  void set_peers(std::function<BinderProc*(const std::string&)> lookup) { peers_ = std::move(lookup); }
  Task& thread_task(size_t i);
  size_t nr_threads() const { return threads_.size(); }
  // Counters for reports and tests.
  uint64_t transactions() const { return transactions_; }
  uint64_t queued_on_proc() const { return queued_on_proc_; }  // found no thread waiting

 private:
  friend class BinderThread;
  struct Transaction {
    Time work;
    const CallSpec* nested = nullptr;  // the call the server makes after `work`
    Time work_after;                   // its work after the nested call returns
    int priority = 0;                // the caller's nice (mainline)
    Policy policy = Policy::kNormal;  // t->priority (android): policy and kernel prio
    int prio = 120;
    bool set_priority_called = false;  // android: applied to its thread already
    BinderClient* client = nullptr;  // nullptr: one-way
    BinderWorkHook* on_done = nullptr;
  };
  void enqueue_for(BinderThread* thread, Transaction t, const Task* waker, int from_cpu, bool sync);
  BinderThread* select_thread();                   // binder_select_thread_ilocked()
  void free_async_buffer(Task& self);              // binder_free_buf() of a one-way transaction
  Kernel& k_;
  BinderProcParams params_;
  std::vector<std::unique_ptr<BinderThread>> threads_;
  std::vector<BinderThread*> waiting_;  // proc->waiting_threads; back() is the list head (newest)
  Fifo<Transaction> todo_;        // proc->todo
  Fifo<Transaction> async_todo_;  // node->async_todo
  bool has_async_transaction_ = false;  // node->has_async_transaction
  uint64_t transactions_ = 0, queued_on_proc_ = 0;
  std::function<BinderProc*(const std::string&)> peers_;
};

}  // namespace schedlab
