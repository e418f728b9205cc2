// drivers/android/binder.c (Linux 6.12): binder_proc_transaction(),
// binder_thread_read(), binder_free_buf(), as described in binder.h; with
// `android: true` the Android Common Kernel's priority rules.
#include "models/kernel/binder/binder.h"

#include <fmt/format.h>

#include "models/errors.h"
#include "models/kernel/kernel.h"
#include "sim/log.h"

namespace schedlab {

// One looper thread of the pool: IPCThreadState::joinThreadPool() over
// binder_thread_read() and BC_REPLY / BC_FREE_BUFFER.
class BinderThread final : public TaskBody, public BinderClient {
 public:
  BinderThread(BinderProc& proc, Task& task) : proc_(proc), task_(task) {}
  Task& task() { return task_; }
  void give(const BinderProc::Transaction& t) { todo_.push_back(t); }  // onto thread->todo
  Action next(Task& self) override;
  // The reply to this thread's nested call: wake it (WF_SYNC).
  void binder_reply(Task& server) override;
  // ACK binder_transaction_priority(): t's priority onto this thread, once.
  void transaction_priority(BinderProc::Transaction& t);

 private:
  void set_nice(Task& self, int nice);  // binder_set_nice()
  void set_priority(Task& self, Policy policy, int prio);  // ACK binder_do_set_priority()
  void restore(Task& self, Policy policy, int prio);     // either kernel's restore
  BinderProc& proc_;
  Task& task_;
  Fifo<BinderProc::Transaction> todo_;  // thread->todo
  BinderProc::Transaction cur_;
  // Where the thread is in cur_: its work before the nested call, waiting
  // for the nested reply, its work after it, held by its hook before the
  // reply.
  enum class Step : uint8_t { kIdle, kWork, kNested, kAfter, kHeld };
  Step step_ = Step::kIdle;
  // t->saved_priority: a nice in mainline (saved_prio_ = 120 + nice), the
  // policy and normal_prio in the ACK. The kernel keeps it per transaction;
  // one per thread is the same here because a thread serves one
  // transaction at a time (no call back into the chain hands it another).
  Policy saved_policy_ = Policy::kNormal;
  int saved_prio_ = kDefaultPrio;
  // binder_thread_read() restored the process's default priority and
  // passed the restore's preemption point; it takes proc->todo's work next.
  bool read_restored_ = false;
};

void BinderThread::set_nice(Task& self, int nice) {
  if (self.nice() == nice) return;
  SL_DEBUG("{:.6f} binder {}: {} nice {} -> {}", proc_.kernel().now().to_s(), proc_.name(), self.comm, self.nice(),
           nice);
  proc_.kernel().set_user_nice(self, nice);  // binder_set_nice()
}

// binder_do_set_priority() with CAP_SYS_NICE: a new policy or any RT
// priority goes through sched_setscheduler_nocheck() (the nice stays),
// then a fair priority through set_user_nice().
void BinderThread::set_priority(Task& self, Policy policy, int prio) {
  if (self.policy == policy && self.normal_prio == prio) return;
  const bool rt = is_rt_policy(policy);
  SL_DEBUG("{:.6f} binder {}: {} prio {} -> {}{}", proc_.kernel().now().to_s(), proc_.name(), self.comm,
           self.normal_prio, prio, rt ? (policy == Policy::kFifo ? " (FIFO)" : " (RR)") : "");
  Kernel& k = proc_.kernel();
  if (policy != self.policy || rt) k.set_scheduler(self, policy, self.nice(), rt ? kMaxRtPrio - 1 - prio : 0);
  if (!rt) k.set_user_nice(self, prio - kDefaultPrio);
}

void BinderThread::restore(Task& self, Policy policy, int prio) {
  if (proc_.params_.android)
    set_priority(self, policy, prio);
  else
    set_nice(self, prio - kDefaultPrio);
}

void BinderThread::transaction_priority(BinderProc::Transaction& t) {
  if (t.set_priority_called) return;
  t.set_priority_called = true;
  Task& self = task_;
  saved_policy_ = self.policy;
  saved_prio_ = self.normal_prio;
  const BinderProcParams& p = proc_.params_;
  Policy policy = t.policy;
  int prio = t.prio;
  if (!p.inherit_rt && is_rt_policy(policy)) {
    policy = Policy::kNormal;
    prio = kDefaultPrio;
  }
  // The node's minimum, compared with the priority the transaction would
  // run at: an RT caller without INHERIT_RT is compared as the nice 0 it
  // was demoted to (ACK android16-6.12's binder_transaction_priority()).
  const bool node_rt = is_rt_policy(p.min_policy);
  const int node_prio = node_rt ? kMaxRtPrio - 1 - p.min_rt_priority : kDefaultPrio + p.min_nice;
  if (node_prio < prio || (node_prio == prio && p.min_policy == Policy::kFifo)) {
    policy = p.min_policy;
    prio = node_prio;
  }
  set_priority(self, policy, prio);
}

void BinderThread::binder_reply(Task& server) {
  proc_.kernel().try_to_wake_up(task_, &server, server.cpu, kWfSync);
}

Action BinderThread::next(Task& self) {
  for (;;) {
    if (step_ == Step::kWork && cur_.nested) {
      // The nested binder_transaction(): this thread is the caller, at the
      // priority it runs at; a synchronous call sleeps until the reply.
      const CallSpec& call = *cur_.nested;
      BinderProc* target = proc_.peers_ ? proc_.peers_(call.target) : nullptr;
      if (!target) throw ModelError(fmt::format("binder '{}': nested call to unknown process '{}'", proc_.name(),
                                                call.target));
      target->transact(self, call, call.oneway ? nullptr : this);
      if (!call.oneway) {
        step_ = Step::kNested;
        return Action::block(TaskState::kInterruptible);
      }
      step_ = Step::kNested;
    }
    if (step_ == Step::kNested) {
      step_ = Step::kAfter;
      if (cur_.work_after > Time::zero()) return Action::run(cur_.work_after.count());
    }
    if (step_ != Step::kIdle) {
      if (step_ != Step::kHeld) {
        step_ = Step::kHeld;
        if (cur_.on_done) {
          cur_.on_done->binder_work_done(self);
          // The hook's wake-up is a syscall in user space (a futex or
          // eventfd wake): its return to user space is a preemption point
          // before the thread's next binder ioctl (BC_REPLY or
          // BC_FREE_BUFFER), so a task it woke above this thread runs
          // before the reply or the one-way buffer's hand-off.
          return Action::return_to_user();
        }
      }
      if (cur_.on_done && cur_.on_done->binder_hold(self)) return Action::block(TaskState::kInterruptible);
      step_ = Step::kIdle;
      if (cur_.client) {
        // BC_REPLY: mainline's binder_transaction(reply) restores the saved
        // nice, then wakes the caller (wake_up_interruptible_sync()); the
        // ACK wakes the caller first and then restores, so the caller is
        // placed while the replier still has its priority.
        if (!proc_.params_.android) restore(self, saved_policy_, saved_prio_);
        cur_.client->binder_reply(self);
        if (proc_.params_.android) restore(self, saved_policy_, saved_prio_);
        // The BC_REPLY ioctl returns to user space (libbinder's
        // sendReply() waits only for BR_TRANSACTION_COMPLETE) before the
        // looper's next ioctl reads more work: a caller the reply woke, or
        // any task the restore left above this thread, runs first, and
        // the next transaction's priority is set only when this thread
        // takes it. (A preemptible kernel could switch even earlier, at
        // the restore's unlock; the order of what follows is the same.)
        return Action::return_to_user();
      } else {
        // BC_FREE_BUFFER of the one-way buffer (libbinder's looper sends it
        // with its next read, in the same ioctl): binder_free_buf() may
        // wake a thread, and its binder_inner_proc_unlock() is a
        // preemption point.
        proc_.free_async_buffer(self);
        return Action::preempt_point();
      }
    }
    // binder_thread_read(): own work first; else wait for process work at
    // the process's nice, taking proc->todo's first if there is one.
    BinderProc::Transaction t;
    if (!todo_.empty()) {
      read_restored_ = false;
      t = todo_.front();
      todo_.pop_front();
    } else {
      if (!read_restored_) {
        // The restore lowers the thread's priority before it looks at
        // proc->todo or joins proc->waiting_threads
        // (binder_wait_for_work()); a preemptible kernel switches at its
        // unlock (a lowered fair priority reschedules the CPU,
        // prio_changed_fair()), so a task it left above this thread runs
        // first, and work queued meanwhile goes to proc->todo or another
        // waiting thread, not to this one.
        restore(self, Policy::kNormal, kDefaultPrio + proc_.params_.nice);  // proc->default_priority
        read_restored_ = true;
        return Action::preempt_point();
      }
      read_restored_ = false;
      if (proc_.todo_.empty()) {
        proc_.waiting_.push_back(this);  // list_add(): the newest waiter is the head
        return Action::block(TaskState::kInterruptible);
      }
      t = proc_.todo_.front();
      proc_.todo_.pop_front();
    }
    // BR_TRANSACTION: the node's priority rule.
    const bool sync = t.client != nullptr;
    if (proc_.params_.android) {
      transaction_priority(t);  // unless the caller applied it at hand-over
    } else {
      // binder_new_node(): node->min_priority is a u8 (flags &
      // FLAT_BINDER_FLAG_PRIORITY_MASK), so a negative nice is stored as
      // 256 + nice, above every nice: a synchronous call then takes the
      // caller's nice and a one-way call changes nothing (6.12.19, 6.18).
      const int min_nice = proc_.params_.min_nice & 0xff;
      saved_prio_ = kDefaultPrio + self.nice();
      if (sync && t.priority < min_nice)
        set_nice(self, t.priority);
      else if (sync || self.nice() > min_nice)
        set_nice(self, min_nice);
    }
    cur_ = t;
    step_ = Step::kWork;
    if (t.work > Time::zero()) return Action::run(t.work.count());
  }
}

BinderProc::BinderProc(Kernel& k, const BinderProcParams& params, Time start) : k_(k), params_(params) {
  if (params_.name.empty()) throw ModelError("binder: a process needs a name");
  if (params_.threads < 1) throw ModelError(fmt::format("binder '{}': needs at least one thread", params_.name));
  for (int nice : {params_.nice, params_.min_nice})
    if (nice < -20 || nice > 19)
      throw ModelError(fmt::format("binder '{}': nice {} out of range -20..19", params_.name, nice));
  const bool rt_node = is_rt_policy(params_.min_policy);
  if (!params_.android && (params_.inherit_rt || params_.min_policy != Policy::kNormal))
    throw ModelError(fmt::format("binder '{}': inherit_rt and a min_policy are the Android Common Kernel's "
                                 "(set android: true)",
                                 params_.name));
  if (rt_node ? params_.min_rt_priority < 1 || params_.min_rt_priority > 99 : params_.min_rt_priority != 0)
    throw ModelError(fmt::format("binder '{}': min_rt_priority {} (1..99 with an RT min_policy, else 0)",
                                 params_.name, params_.min_rt_priority));
  if (params_.min_policy == Policy::kIdle)
    throw ModelError(fmt::format("binder '{}': min_policy SCHED_IDLE is not a binder policy", params_.name));
  const std::string group = params_.group();
  for (int i = 0; i < params_.threads; ++i) {
    Task& t = k.create_task(params_.thread_name(i), group, Policy::kNormal, params_.nice, 0, params_.cpus,
                            false);
    if (!params_.cgroup.empty()) k.sched_move_task(t, k.cpu_cgroup_index(params_.cgroup));
    threads_.push_back(std::make_unique<BinderThread>(*this, t));
    k.set_body(t, threads_.back().get());
    k.start_task_at(t, start);
  }
}

BinderProc::~BinderProc() = default;

Task& BinderProc::thread_task(size_t i) { return threads_.at(i)->task(); }

BinderThread* BinderProc::select_thread() {
  if (waiting_.empty()) return nullptr;
  BinderThread* t = waiting_.back();
  waiting_.pop_back();
  return t;
}

void BinderProc::enqueue_for(BinderThread* thread, Transaction t, const Task* waker, int from_cpu, bool sync) {
  if (!thread) {
    // Every thread is busy: the first to come back for work takes it.
    todo_.push_back(t);
    ++queued_on_proc_;
    return;
  }
  // ACK: the caller sets the chosen thread's priority before waking it,
  // so the thread wakes up (and is placed) at that priority.
  if (params_.android) thread->transaction_priority(t);
  thread->give(t);
  k_.try_to_wake_up(thread->task(), waker, from_cpu, sync ? kWfSync : 0);
}

void BinderProc::transact(Task& caller, const CallSpec& call, BinderClient* client, BinderWorkHook* on_done) {
  ++transactions_;
  Transaction t;
  t.work = call.cost;
  t.nested = call.nested.get();
  t.work_after = call.cost_after;
  t.priority = caller.nice();  // task_nice(current)
  // ACK: a synchronous call from a fair or RT caller carries its policy
  // and normal_prio (not a PI boost); otherwise the process's default.
  // (binder_supported_policy() refuses SCHED_DEADLINE callers too; no
  // workload task can be one: the loaders refuse the policy.)
  if (client && caller.policy != Policy::kIdle) {
    t.policy = caller.policy;
    t.prio = caller.normal_prio;
  } else {
    t.policy = Policy::kNormal;
    t.prio = kDefaultPrio + params_.nice;
  }
  t.client = client;
  t.on_done = on_done;
  if (!client) {
    // One-way: one outstanding per node; the rest wait, unwoken.
    if (has_async_transaction_) {
      async_todo_.push_back(t);
      return;
    }
    has_async_transaction_ = true;
  }
  enqueue_for(select_thread(), t, &caller, caller.cpu, client != nullptr);
}

void BinderProc::free_async_buffer(Task& self) {
  if (async_todo_.empty()) {
    has_async_transaction_ = false;
    return;
  }
  // The node's next one-way transaction goes on proc->todo and a waiting
  // thread is woken (binder_wakeup_proc_ilocked(), no WF_SYNC); the thread
  // freeing the buffer reads proc->todo before it sleeps, so it may take
  // the work first and the woken one go back to waiting.
  todo_.push_back(async_todo_.front());
  async_todo_.pop_front();
  if (BinderThread* t = select_thread()) k_.try_to_wake_up(t->task(), &self, self.cpu, 0);
}

}  // namespace schedlab
