//! The coverage properties' tests: each is reached by a hand-made history and only by it,
//! and the deep ones only in the exact situation they name.

use sutra_sim_core::{Check, Checker};

use super::specs;
use crate::checkers::testing::feed;
use crate::event::{CallFault, Exit, ModelEvent, StoreCall};
use crate::faults::kind::FaultKind;
use crate::ids::{Code, ExecId, InstanceId, OwnerId, ProcessId, ResumePath};
use crate::view::ModelView;

/// A fresh instance of the property named `name`.
fn property(name: &str) -> Box<dyn Checker<ModelEvent, ModelView>> {
    let spec = specs().into_iter().find(|s| s.name == name).unwrap_or_else(|| panic!("no property {name}"));
    (spec.factory)()
}

/// The fault kind whose coverage property is `name`.
fn fault_named(name: &str) -> FaultKind {
    *FaultKind::ALL.iter().find(|k| k.descriptor().coverage == name).unwrap_or_else(|| panic!("no property {name}"))
}

/// A hand-made history that reaches `situation`.
fn history_reaching(name: &str) -> Vec<ModelEvent> {
    use crate::ids::MessageId;
    use ModelEvent as E;
    let i = InstanceId(0);
    let e = ExecId(1);
    let p = ProcessId(1);
    let owner = OwnerId::lane(p, 0);
    let grant = E::ClaimGranted {
        instance: i,
        exec: e,
        owner,
        process: Some(p),
        path: ResumePath::Relay,
        previous: None,
        stale_age_ns: None,
        epoch: 1,
        task: None,
    };
    let refused = |path| E::ClaimRefused {
        instance: i,
        exec: e,
        owner,
        path,
        holder: OwnerId::lane(p, 1),
        task: None,
        process: None,
        delivery: None,
    };
    let dispatched =
        |misrouted| E::Dispatched { instance: i, exec: e, path: ResumePath::Relay, process: p, lane: 0, misrouted };
    match name {
        "sometimes-relay-refused" => vec![
            refused(ResumePath::Relay),
            E::RelayRequeued { instance: i, message: MessageId(1), delay_ns: 500_000_000, delivery: None },
        ],
        "sometimes-timer-deferred" => vec![
            refused(ResumePath::Timer),
            E::TimerDeferred { instance: i, expects: 1, attempt: 1, due_ns: 100_000_000, task: None },
        ],
        "sometimes-admin-409" => vec![refused(ResumePath::Migration)],
        "sometimes-sweep-cleared-dead-owner" => vec![
            grant,
            E::ReplicaCrashed { replica: 0, process: p },
            E::Swept {
                instance: i,
                owner,
                age_ns: 31_000_000_000,
                by: ProcessId(2),
                lease_held: true,
                epoch: 1,
                task: None,
            },
        ],
        "sometimes-slow-owner-commit-rejected" => {
            vec![E::CommitRejected { instance: i, exec: e, owner, holder: None, epoch: 1, task: None }]
        }
        "sometimes-misrouted-work-bounced" => vec![
            dispatched(true),
            E::ClaimRefused {
                instance: i,
                exec: e,
                owner,
                path: ResumePath::Relay,
                holder: OwnerId::lane(p, 1),
                task: None,
                delivery: None,
                process: None,
            },
        ],
        "sometimes-replica-died-mid-step" => vec![dispatched(false), E::ReplicaCrashed { replica: 0, process: p }],
        "sometimes-paused-replica-resumed" => vec![E::ReplicaResumed { replica: 0, process: p }],
        "sometimes-skewed-replica-claimed" => vec![E::ClockSkewed { replica: 0, offset_ms: 500 }, grant],
        "sometimes-pull-task-completed" => vec![E::TaskCompleted { instance: i, worker: 0 }],
        "sometimes-hung-up-migration-released" => vec![
            E::Released { instance: i, exec: e, owner, epoch: 1, current_epoch: 1, released: true, task: Some(30) },
            E::AdminRequestEnded {
                process: p,
                task: 30,
                instance: i,
                status: crate::event::AdminStatus::HungUp,
                code: None,
            },
        ],
        "sometimes-migration-validation-error" => {
            vec![E::AdminRequestEnded {
                process: p,
                task: 30,
                instance: i,
                status: crate::event::AdminStatus::Invalid,
                code: Some(Code::MigrateValidation),
            }]
        }
        "sometimes-expired-lock-taken-over" => vec![
            E::TaskParked { instance: i, step: 2 },
            E::TaskLocked { instance: i, worker: 0 },
            E::TaskLocked { instance: i, worker: 1 },
        ],
        "sometimes-broker-redelivered" => vec![E::RelayDelivered {
            instance: i,
            message: MessageId(1),
            process: p,
            redelivery: true,
            duplicate: false,
            delivery: None,
        }],
        "sometimes-step-committed" => vec![E::CommitAccepted {
            instance: i,
            exec: e,
            owner,
            epoch: 1,
            owner_before: Some(owner),
            current_epoch: 1,
            trigger: crate::event::TriggerRef::Message(MessageId(1)),
            based_on: 0,
            version_before: 0,
            version_after: 1,
            task: None,
        }],
        "sometimes-step-validation-error" => {
            vec![E::StepEnded { instance: i, exec: e, error: Some(Code::StepValidation) }]
        }
        "sometimes-step-unexpected-failure" => {
            vec![E::StepEnded { instance: i, exec: e, error: Some(Code::StepFailed) }]
        }
        "sometimes-step-panic" => vec![E::StepEnded { instance: i, exec: e, error: Some(Code::StepPanic) }],
        "sometimes-refused-reclaim-after-stale-steal" => vec![
            E::ClaimGranted {
                instance: i,
                exec: ExecId(2),
                owner: OwnerId::lane(ProcessId(2), 0),
                process: Some(ProcessId(2)),
                path: ResumePath::Relay,
                previous: Some(owner),
                stale_age_ns: Some(31_000_000_000),
                epoch: 2,
                task: None,
            },
            E::ClaimRefused {
                instance: i,
                exec: ExecId(3),
                owner,
                path: ResumePath::Relay,
                holder: OwnerId::lane(ProcessId(2), 0),
                task: None,
                delivery: None,
                process: None,
            },
        ],
        "sometimes-override-routed" => vec![E::BindingChanged { process: p, instance: i, lane: Some(0) }, grant],
        "sometimes-sweep-interrupted-between-steps" => vec![
            E::SweepSelected { by: p, stale: 1, lease_held: true, task: None },
            E::ReplicaPaused { replica: 0, process: p, for_ns: 20_000_000_000 },
        ],
        "sometimes-paused-consumer-redelivered" => vec![
            E::RelayReclaimed { instance: i, message: MessageId(1), process: p, silent: true, delivery: None },
            E::RelayDelivered {
                instance: i,
                message: MessageId(1),
                process: ProcessId(2),
                redelivery: true,
                duplicate: false,
                delivery: None,
            },
        ],
        "sometimes-skewed-timeout-fired" => {
            vec![E::TimeoutSkewed { process: p, asked_ns: 250_000_000, took_ns: 249_950_000 }]
        }
        // The test view is smoke's: a window of 8, filled by 8 unsettled deliveries.
        "sometimes-prefetch-window-full" => (0..8)
            .map(|m| E::RelayDelivered {
                instance: i,
                message: MessageId(m),
                process: p,
                redelivery: false,
                duplicate: false,
                delivery: None,
            })
            .collect(),
        "sometimes-ambiguous-commit-resolved" => vec![E::CallStruck {
            instance: i,
            exec: e,
            call: StoreCall::Commit,
            fault: CallFault::ReplyLost,
            task: None,
        }],
        "sometimes-same-owner-reclaim-granted" => {
            vec![E::ClaimGranted {
                instance: i,
                exec: e,
                owner,
                process: Some(p),
                path: ResumePath::Relay,
                previous: Some(owner),
                stale_age_ns: None,
                epoch: 2,
                task: None,
            }]
        }
        "sometimes-cancelled-execution-released" => vec![
            E::Released { instance: i, exec: e, owner, epoch: 1, current_epoch: 1, released: true, task: None },
            E::ExecutionEnded { instance: i, exec: e, exit: Exit::Cancelled },
        ],
        "sometimes-late-release-after-reclaim" => vec![
            grant.clone(),
            E::ClaimGranted {
                instance: i,
                exec: ExecId(2),
                owner,
                process: Some(p),
                path: ResumePath::Relay,
                previous: Some(owner),
                stale_age_ns: None,
                epoch: 2,
                task: None,
            },
            E::CallStruck { instance: i, exec: e, call: StoreCall::Release, fault: CallFault::LateLanded, task: None },
        ],
        "sometimes-ambiguous-lease-renewal" => vec![
            E::LeaseAcquired { process: p, until_ns: 1, renewal: true, task: Some(7) },
            E::RoleCallStruck {
                call: StoreCall::Lease,
                fault: CallFault::ReplyLost,
                for_instance: None,
                task: Some(7),
            },
        ],
        "sometimes-ambiguous-sweep-clear" => vec![
            E::Swept { instance: i, owner, epoch: 1, age_ns: 1, by: p, lease_held: true, task: Some(7) },
            E::RoleCallStruck {
                call: StoreCall::SweepClear,
                fault: CallFault::ReplyLost,
                for_instance: Some(i),
                task: Some(7),
            },
        ],
        "sometimes-request-landed-while-sender-frozen" => {
            vec![E::ReplicaPaused { replica: 0, process: p, for_ns: 1 }, grant.clone()]
        }
        "sometimes-caller-struck-at-store-call" => vec![E::CallStruck {
            instance: i,
            exec: e,
            call: StoreCall::Read,
            fault: CallFault::PausedAfter,
            task: None,
        }],
        "sometimes-drained-replica-released" => vec![
            grant,
            E::ShutdownRequested { replica: 0, process: p, drain_ns: 150_000_000 },
            E::Released { instance: i, exec: e, owner, epoch: 1, current_epoch: 1, released: true, task: None },
        ],
        "sometimes-drain-deadline-cancel-released" => vec![
            grant,
            E::ShutdownRequested { replica: 0, process: p, drain_ns: 150_000_000 },
            E::TaskAborted { replica: 0, process: p, lane: 0, task: 7 },
            E::Released { instance: i, exec: e, owner, epoch: 1, current_epoch: 1, released: true, task: None },
        ],
        "sometimes-restarted-after-graceful-stop" => vec![
            E::ReplicaStopped { replica: 0, process: p },
            E::ReplicaRestarted { replica: 0, process: ProcessId(2) },
        ],
        "sometimes-commit-retried-after-abort" => aborted_commit(e, p).into_iter().map(|(_, ev)| ev).collect(),
        "sometimes-froze-retrying-commit" => aborted_commit(e, p)
            .into_iter()
            .map(|(_, ev)| ev)
            .chain([E::ReplicaPaused { replica: 0, process: p, for_ns: 40_000_000_000 }])
            .collect(),
        "sometimes-lease-holder-froze-before-select" => vec![
            E::LeaseAcquired { process: p, until_ns: 15_000_000_000, renewal: true, task: None },
            E::ReplicaPaused { replica: 0, process: p, for_ns: 20_000_000_000 },
        ],
        "sometimes-zombie-resumed-mid-step" => vec![
            dispatched(false),
            E::StepStarted { instance: i, exec: e, step: 1, slow: true },
            E::ReplicaPaused { replica: 0, process: p, for_ns: 20_000_000_000 },
            E::ReplicaRestarted { replica: 0, process: ProcessId(2) },
            E::ReplicaResumed { replica: 0, process: p },
        ],
        "sometimes-request-landed-after-its-sender-died" => vec![
            E::TaskAborted { replica: 0, process: p, lane: 0, task: 7 },
            E::ClaimFenced { instance: i, exec: e, owner, number: 1, seen: 2, task: Some(7) },
        ],
        "sometimes-migration-retried-after-claim-held" => {
            use crate::event::AdminStatus;
            let received = |task, attempt| E::AdminRequestReceived {
                process: p,
                task,
                client: 0,
                request: 4,
                instance: i,
                to_lane: 1,
                attempt,
            };
            vec![
                received(30, 1),
                E::AdminRequestEnded {
                    process: p,
                    task: 30,
                    instance: i,
                    status: AdminStatus::Conflict,
                    code: Some(Code::MigrateClaimHeld),
                },
                received(31, 2),
                E::AdminRequestEnded { process: p, task: 31, instance: i, status: AdminStatus::Migrated, code: None },
            ]
        }
        "sometimes-hung-step-completed-elsewhere" => {
            let granted_to = |owner, task| E::ClaimGranted {
                instance: i,
                exec: e,
                owner,
                process: Some(p),
                path: ResumePath::Relay,
                previous: None,
                stale_age_ns: None,
                epoch: 1,
                task: Some(task),
            };
            let other = OwnerId::lane(ProcessId(2), 0);
            vec![
                granted_to(owner, 7),
                E::FaultInjected { fault: FaultKind::HungStep, replica: None, detail_ns: 0, task: Some(7) },
                granted_to(other, 8),
                committed_by(other),
            ]
        }
        "sometimes-late-claim-fenced" => {
            vec![E::ClaimFenced { instance: i, exec: e, owner, number: 1, seen: 2, task: None }]
        }
        "sometimes-relay-back-while-copy-queued" => vec![
            dispatched(false),
            E::RelayReclaimed { instance: i, message: MessageId(1), process: p, silent: false, delivery: None },
            E::RelayDelivered {
                instance: i,
                message: MessageId(1),
                process: p,
                redelivery: true,
                duplicate: false,
                delivery: None,
            },
        ],
        fault => {
            let fault = fault_named(fault);
            vec![E::FaultInjected { fault, replica: None, detail_ns: 0, task: None }]
        }
    }
    .into_iter()
    .chain([E::ExecutionEnded { instance: i, exec: e, exit: Exit::Committed }])
    .collect()
}

/// Execution `exec` of process `p` reads its row as lane task 7, ends its step, and its
/// commit's first attempt is aborted by the store (a `Store` fault of no duration, from
/// the same task). Events numbered for [`feed`].
fn aborted_commit(exec: ExecId, p: ProcessId) -> Vec<(u64, ModelEvent)> {
    use ModelEvent as E;
    let i = InstanceId(0);
    let owner = OwnerId::lane(p, 0);
    vec![
        E::Dispatched { instance: i, exec, path: ResumePath::Relay, process: p, lane: 0, misrouted: false },
        E::StoreRead {
            instance: i,
            exec,
            claim_owner: owner,
            claim_epoch: 1,
            owner: Some(owner),
            epoch: 1,
            version: 0,
            task: Some(7),
        },
        E::StepEnded { instance: i, exec, error: None },
        E::FaultInjected { fault: FaultKind::Store, replica: None, detail_ns: 0, task: Some(7) },
    ]
    .into_iter()
    .map(|e| (1, e))
    .collect()
}

#[test]
fn a_commit_retry_is_an_abort_after_a_clean_step_of_the_aborted_task_only() {
    use ModelEvent as E;
    let (e, p) = (ExecId(1), ProcessId(1));
    let run = |name, events: Vec<(u64, E)>| feed(property(name).as_mut(), events);
    assert_eq!(run("sometimes-commit-retried-after-abort", aborted_commit(e, p)), Check::Reached);
    // The abort of another task's call, or of a call before the step ended (the claim,
    // the read, a release after a failed step), is no commit retry.
    let mut other_task = aborted_commit(e, p);
    other_task[3].1 = E::FaultInjected { fault: FaultKind::Store, replica: None, detail_ns: 0, task: Some(8) };
    assert_eq!(run("sometimes-commit-retried-after-abort", other_task), Check::Ok);
    let mut failed_step = aborted_commit(e, p);
    failed_step[2].1 = E::StepEnded { instance: InstanceId(0), exec: e, error: Some(Code::StepFailed) };
    assert_eq!(run("sometimes-commit-retried-after-abort", failed_step), Check::Ok);
    // A latency spike (a store fault with a duration) is no abort.
    let mut spike = aborted_commit(e, p);
    spike[3].1 = E::FaultInjected { fault: FaultKind::Store, replica: None, detail_ns: 9, task: Some(7) };
    assert_eq!(run("sometimes-commit-retried-after-abort", spike), Check::Ok);
}

#[test]
fn a_freeze_counts_while_the_retried_commit_is_pending_on_the_frozen_process_only() {
    use ModelEvent as E;
    let (e, p) = (ExecId(1), ProcessId(1));
    let paused = |process| (2, E::ReplicaPaused { replica: 0, process, for_ns: 1 });
    let run = |events: Vec<(u64, E)>| feed(property("sometimes-froze-retrying-commit").as_mut(), events);
    let mut frozen = aborted_commit(e, p);
    frozen.push(paused(p));
    assert_eq!(run(frozen), Check::Reached);
    let mut elsewhere = aborted_commit(e, p);
    elsewhere.push(paused(ProcessId(2)));
    assert_eq!(run(elsewhere), Check::Ok);
    let mut settled = aborted_commit(e, p);
    settled.push((2, E::ExecutionEnded { instance: InstanceId(0), exec: e, exit: Exit::Committed }));
    settled.push(paused(p));
    assert_eq!(run(settled), Check::Ok);
}

#[test]
fn a_lease_holder_freeze_counts_between_its_grant_and_its_select_only() {
    use ModelEvent as E;
    let p = ProcessId(1);
    let granted = E::LeaseAcquired { process: p, until_ns: 15_000_000_000, renewal: false, task: None };
    let selected = E::SweepSelected { by: p, stale: 0, lease_held: true, task: None };
    let paused = |process| E::ReplicaPaused { replica: 0, process, for_ns: 20_000_000_000 };
    let run = |events: Vec<E>| {
        let mut c = property("sometimes-lease-holder-froze-before-select");
        feed(c.as_mut(), events.into_iter().map(|e| (1, e)).collect())
    };
    assert_eq!(run(vec![granted.clone(), paused(p)]), Check::Reached);
    assert_eq!(run(vec![granted.clone(), paused(ProcessId(2))]), Check::Ok);
    assert_eq!(run(vec![granted, selected, paused(p)]), Check::Ok);
}

#[test]
fn only_a_replaced_process_resuming_mid_step_is_a_zombie_resumed_mid_step() {
    use ModelEvent as E;
    let (i, e, p) = (InstanceId(0), ExecId(1), ProcessId(1));
    let dispatched =
        E::Dispatched { instance: i, exec: e, path: ResumePath::Relay, process: p, lane: 0, misrouted: false };
    let started = E::StepStarted { instance: i, exec: e, step: 1, slow: true };
    let paused = E::ReplicaPaused { replica: 0, process: p, for_ns: 20_000_000_000 };
    let replaced = E::ReplicaRestarted { replica: 0, process: ProcessId(2) };
    let resumed = E::ReplicaResumed { replica: 0, process: p };
    let ended = E::StepEnded { instance: i, exec: e, error: None };
    let run = |events: Vec<E>| {
        let mut c = property("sometimes-zombie-resumed-mid-step");
        feed(c.as_mut(), events.into_iter().map(|e| (1, e)).collect())
    };
    let all = vec![dispatched.clone(), started.clone(), paused.clone(), replaced.clone(), resumed.clone()];
    assert_eq!(run(all), Check::Reached);
    // Not replaced: an ordinary pause.
    assert_eq!(run(vec![dispatched.clone(), started.clone(), paused.clone(), resumed.clone()]), Check::Ok);
    // Replaced, but the step had ended: the lanes are idle.
    assert_eq!(run(vec![dispatched, started, ended, paused, replaced, resumed]), Check::Ok);
}

#[test]
fn a_relay_back_counts_only_at_the_process_it_was_taken_from_with_a_copy_still_waiting() {
    use crate::ids::MessageId;
    use ModelEvent as E;
    let (i, e, p, m) = (InstanceId(0), ExecId(1), ProcessId(1), MessageId(1));
    let dispatched =
        E::Dispatched { instance: i, exec: e, path: ResumePath::Relay, process: p, lane: 0, misrouted: false };
    let taken = E::RelayReclaimed { instance: i, message: m, process: p, silent: false, delivery: None };
    let to = |process| E::RelayDelivered {
        instance: i,
        message: m,
        process,
        redelivery: true,
        duplicate: false,
        delivery: None,
    };
    let taken_by_lane = E::ClaimAttempt { instance: i, exec: e, owner: OwnerId::lane(p, 0), path: ResumePath::Relay };
    let run = |events: Vec<E>| {
        let mut c = property("sometimes-relay-back-while-copy-queued");
        feed(c.as_mut(), events.into_iter().map(|e| (1, e)).collect())
    };
    assert_eq!(run(vec![dispatched.clone(), taken.clone(), to(p)]), Check::Reached);
    assert_eq!(run(vec![dispatched.clone(), taken.clone(), to(ProcessId(2))]), Check::Ok);
    assert_eq!(run(vec![dispatched.clone(), taken_by_lane, taken.clone(), to(p)]), Check::Ok);
    assert_eq!(run(vec![dispatched, to(p)]), Check::Ok);
}

#[test]
fn a_late_release_counts_only_after_its_own_owner_claimed_again() {
    use ModelEvent as E;
    let (i, p) = (InstanceId(0), ProcessId(1));
    let grant = |exec, owner, epoch| E::ClaimGranted {
        instance: i,
        exec: ExecId(exec),
        owner,
        process: Some(p),
        path: ResumePath::Relay,
        previous: None,
        stale_age_ns: None,
        epoch,
        task: None,
    };
    let landed = E::CallStruck {
        instance: i,
        exec: ExecId(1),
        call: StoreCall::Release,
        fault: CallFault::LateLanded,
        task: None,
    };
    let (mine, other) = (OwnerId::lane(p, 0), OwnerId::lane(ProcessId(2), 0));
    let run = |events: Vec<E>| {
        let mut c = property("sometimes-late-release-after-reclaim");
        feed(c.as_mut(), events.into_iter().map(|e| (1, e)).collect())
    };
    assert_eq!(run(vec![grant(1, mine, 1), grant(2, mine, 2), landed.clone()]), Check::Reached);
    assert_eq!(run(vec![grant(1, mine, 1), landed.clone()]), Check::Ok, "no newer grant");
    assert_eq!(run(vec![grant(1, mine, 1), grant(2, other, 2), landed]), Check::Ok, "another owner's grant");
}

/// The store's acceptance of a commit of instance 0's first step by `owner`.
fn committed_by(owner: OwnerId) -> ModelEvent {
    ModelEvent::CommitAccepted {
        instance: InstanceId(0),
        exec: ExecId(2),
        owner,
        epoch: 2,
        owner_before: Some(owner),
        current_epoch: 2,
        trigger: crate::event::TriggerRef::TimerRow { expects: 0 },
        based_on: 0,
        version_before: 0,
        version_after: 1,
        task: Some(8),
    }
}

#[test]
fn a_hung_step_counts_as_completed_elsewhere_only_when_another_owner_commits() {
    let name = "sometimes-hung-step-completed-elsewhere";
    let hung = OwnerId::lane(ProcessId(1), 0);
    let grant = ModelEvent::ClaimGranted {
        instance: InstanceId(0),
        exec: ExecId(1),
        owner: hung,
        process: Some(ProcessId(1)),
        path: ResumePath::Timer,
        previous: None,
        stale_age_ns: None,
        epoch: 1,
        task: Some(7),
    };
    let hang = |task| ModelEvent::FaultInjected { fault: FaultKind::HungStep, replica: None, detail_ns: 0, task };
    // The hung owner's own commit (after its per-step timeout, say) is no other owner's.
    let own = vec![(1, grant.clone()), (2, hang(Some(7))), (3, committed_by(hung))];
    assert_eq!(feed(property(name).as_mut(), own), Check::Ok);
    // Another owner's commit without a hang, or after a hang of an unknown task, is not either.
    let other = OwnerId::lane(ProcessId(2), 0);
    let no_hang = vec![(1, grant.clone()), (3, committed_by(other))];
    assert_eq!(feed(property(name).as_mut(), no_hang), Check::Ok);
    let unknown_task = vec![(1, grant.clone()), (2, hang(Some(9))), (3, committed_by(other))];
    assert_eq!(feed(property(name).as_mut(), unknown_task), Check::Ok);
    let taken_over = vec![(1, grant), (2, hang(Some(7))), (3, committed_by(other))];
    assert_eq!(feed(property(name).as_mut(), taken_over), Check::Reached);
}

#[test]
fn every_situation_is_reached_by_its_history_and_only_by_it() {
    for spec in specs() {
        let name = spec.name;
        let history: Vec<(u64, ModelEvent)> = history_reaching(name).into_iter().map(|e| (1, e)).collect();
        assert_eq!(feed(property(name).as_mut(), history.clone()), Check::Reached, "{name}");
        // A plain successful step reaches nothing.
        let quiet = vec![(1, ModelEvent::InstanceCompleted { instance: InstanceId(0) })];
        assert_eq!(feed(property(name).as_mut(), quiet), Check::Ok, "{name}");
    }
}

#[test]
fn a_dead_owners_sweep_is_reached_and_a_live_ones_is_not() {
    let owner = OwnerId::lane(ProcessId(3), 1);
    let grant = ModelEvent::ClaimGranted {
        instance: InstanceId(0),
        exec: ExecId(1),
        owner,
        process: Some(ProcessId(3)),
        path: ResumePath::Relay,
        previous: None,
        stale_age_ns: None,
        epoch: 1,
        task: None,
    };
    let swept = ModelEvent::Swept {
        instance: InstanceId(0),
        owner,
        age_ns: 31_000_000_000,
        by: ProcessId(1),
        lease_held: true,
        epoch: 1,
        task: None,
    };
    let crash = ModelEvent::ReplicaCrashed { replica: 2, process: ProcessId(3) };
    let mut c = property("sometimes-sweep-cleared-dead-owner");
    assert_eq!(feed(c.as_mut(), vec![(1, grant.clone()), (2, crash), (3, swept.clone())]), Check::Reached);
    let mut c = property("sometimes-sweep-cleared-dead-owner");
    assert_eq!(feed(c.as_mut(), vec![(1, grant), (3, swept)]), Check::Ok);
}

#[test]
fn a_sweep_is_interrupted_by_a_pause_or_a_lease_loss_between_its_select_and_its_clears_only() {
    use ModelEvent as E;
    let (p, q) = (ProcessId(1), ProcessId(2));
    let selected = |stale| E::SweepSelected { by: p, stale, lease_held: true, task: None };
    let paused = E::ReplicaPaused { replica: 0, process: p, for_ns: 1 };
    let other_lease = E::LeaseAcquired { process: q, until_ns: 99, renewal: false, task: None };
    let missed = E::SweepClearMissed { instance: InstanceId(0), by: p, epoch: 1, task: None };
    let run = |events: Vec<E>| {
        let mut c = property("sometimes-sweep-interrupted-between-steps");
        feed(c.as_mut(), events.into_iter().map(|e| (1, e)).collect())
    };
    assert_eq!(run(vec![selected(2), other_lease.clone()]), Check::Reached);
    assert_eq!(run(vec![selected(2), paused.clone()]), Check::Reached);
    // Nothing selected, or the clears already made: no window to interrupt.
    assert_eq!(run(vec![selected(0), paused.clone()]), Check::Ok);
    assert_eq!(run(vec![selected(2), missed, paused, other_lease]), Check::Ok);
}

#[test]
fn a_window_short_of_full_or_emptied_by_acks_is_not_reached() {
    let delivered = |m| ModelEvent::RelayDelivered {
        instance: InstanceId(0),
        message: crate::ids::MessageId(m),
        process: ProcessId(1),
        redelivery: false,
        duplicate: false,
        delivery: None,
    };
    let acked =
        |m| ModelEvent::RelayAcked { instance: InstanceId(0), message: crate::ids::MessageId(m), delivery: None };
    let seven: Vec<(u64, ModelEvent)> = (0..7).map(|m| (1, delivered(m))).collect();
    let mut c = property("sometimes-prefetch-window-full");
    assert_eq!(feed(c.as_mut(), seven.clone()), Check::Ok);
    let mut settled = seven;
    settled.push((2, acked(0)));
    settled.push((3, delivered(7)));
    let mut c = property("sometimes-prefetch-window-full");
    assert_eq!(feed(c.as_mut(), settled), Check::Ok);
}

/// Feeds `history` to `checker` as the judge does: only the events whose tag it reads.
fn feed_as_judged(checker: &mut dyn Checker<ModelEvent, ModelView>, history: Vec<(u64, ModelEvent)>) -> Check {
    use sutra_sim_core::EventKind;
    let mask = checker.interest();
    feed(checker, history.into_iter().filter(|(_, e)| mask & (1 << e.tag()) != 0).collect())
}

#[test]
fn a_dead_lettered_delivery_leaves_the_window_as_prefetch_window_books_it() {
    // Smoke's window of 8: seven delivered, one dead-lettered, one more delivered holds 7.
    // The property used to leave dead-letters unread (its copy of the books counted 8).
    let delivered = |m| ModelEvent::RelayDelivered {
        instance: InstanceId(m),
        message: crate::ids::MessageId(m),
        process: ProcessId(1),
        redelivery: false,
        duplicate: false,
        delivery: None,
    };
    let mut history: Vec<(u64, ModelEvent)> = (0..7).map(|m| (1, delivered(m))).collect();
    history.push((2, ModelEvent::example(crate::event::tag::RELAY_DEAD_LETTERED).expect("every tag has an example")));
    if let (_, ModelEvent::RelayDeadLettered { instance, message, .. }) = history.last_mut().expect("pushed") {
        (*instance, *message) = (InstanceId(0), crate::ids::MessageId(0));
    }
    history.push((3, delivered(7)));
    assert_eq!(feed_as_judged(property("sometimes-prefetch-window-full").as_mut(), history.clone()), Check::Ok);
    // Without the dead-letter the window is full.
    history.remove(7);
    assert_eq!(feed_as_judged(property("sometimes-prefetch-window-full").as_mut(), history), Check::Reached);
}

#[test]
fn a_release_counts_for_a_drain_only_between_the_shutdown_request_and_the_stop() {
    use ModelEvent as E;
    let p = ProcessId(1);
    let owner = OwnerId::lane(p, 0);
    let grant = E::ClaimGranted {
        instance: InstanceId(0),
        exec: ExecId(1),
        owner,
        process: Some(p),
        path: ResumePath::Relay,
        previous: None,
        stale_age_ns: None,
        epoch: 1,
        task: None,
    };
    let released = E::Released {
        instance: InstanceId(0),
        exec: ExecId(1),
        owner,
        epoch: 1,
        current_epoch: 1,
        released: true,
        task: None,
    };
    let requested = E::ShutdownRequested { replica: 0, process: p, drain_ns: 1 };
    let aborted = E::TaskAborted { replica: 0, process: p, lane: 0, task: 7 };
    let stopped = E::ReplicaStopped { replica: 0, process: p };
    let run = |name, events: Vec<E>| {
        let mut c = property(name);
        feed(c.as_mut(), events.into_iter().map(|e| (1, e)).collect())
    };
    // No shutdown: an ordinary release.
    assert_eq!(run("sometimes-drained-replica-released", vec![grant.clone(), released.clone()]), Check::Ok);
    // After the stop: too late to be the drain's.
    let late = vec![grant.clone(), requested.clone(), stopped.clone(), released.clone()];
    assert_eq!(run("sometimes-drained-replica-released", late), Check::Ok);
    // An abort outside a drain is the task-abort fault's, not the deadline's.
    let plain_abort = vec![grant.clone(), aborted.clone(), released.clone()];
    assert_eq!(run("sometimes-drain-deadline-cancel-released", plain_abort), Check::Ok);
    // A restart after a crash is no restart after a graceful stop.
    let crashed = vec![
        E::ReplicaStopped { replica: 0, process: p },
        E::ReplicaRestarted { replica: 0, process: ProcessId(2) },
        E::ReplicaCrashed { replica: 0, process: ProcessId(2) },
        E::ReplicaRestarted { replica: 0, process: ProcessId(3) },
    ];
    let mut c = property("sometimes-restarted-after-graceful-stop");
    let verdicts: Vec<Check> = crashed.into_iter().map(|e| feed(c.as_mut(), vec![(1, e)])).collect();
    assert_eq!(verdicts, [Check::Ok, Check::Reached, Check::Ok, Check::Ok]);
}

#[test]
fn every_situation_has_a_distinct_name() {
    let names: std::collections::BTreeSet<&str> = specs().iter().map(|s| s.name).collect();
    assert_eq!(names.len(), specs().len());
}
