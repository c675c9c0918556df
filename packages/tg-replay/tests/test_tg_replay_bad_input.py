"""A battery of invalid calls on every exported function: each must raise a clear, one-line error from
this package's own code (or the core's shared validators) that names the offending argument."""

import traceback

import numpy as np
import pytest

from paperworks.tg_replay import (
    DQNConfig,
    DQNPopulation,
    MatchedWindowSampler,
    NumpyDQN,
    PrioritizedSampler,
    RecencyWindowSampler,
    ReplayMonitor,
    RingBuffer,
    RunConfig,
    SumTree,
    TD3Config,
    TD3Population,
    TruncatedGeometricSampler,
    UniformSampler,
    expected_recency,
    make_sampler,
    make_task,
    relative_recency,
    replay_volume,
    run_dqn,
    run_population,
    run_td3,
    sampler_from_state,
    sampling_entropy,
    truncated_geometric_mean,
)
from paperworks.tg_replay.experiments import TGReplayConfig, sampling_time_ratio

nan, inf = float("nan"), float("inf")
TG = TruncatedGeometricSampler(0.1)


def _per():
    per = PrioritizedSampler(8)
    per.add(np.arange(8))
    return per


def _tree():
    t = SumTree(8)
    t.set(np.arange(8), np.ones(8))
    return t


def _buf(**kw):
    b = RingBuffer(10, (2,), **kw)
    b.add(np.zeros((3, 2)), np.zeros(3, int), np.zeros(3), np.zeros((3, 2)), np.zeros(3))
    return b


def _add(**over):
    args = dict(
        obs=np.zeros((2, 2)),
        action=np.zeros(2, int),
        reward=np.zeros(2),
        next_obs=np.zeros((2, 2)),
        done=np.zeros(2),
    )
    args.update(over)
    return lambda: RingBuffer(10, (2,)).add(**args)


def _dqn():
    return NumpyDQN(3, 2, seed=0)


def _dqn_update(**over):
    args = dict(
        obs=np.zeros((4, 3)),
        action=np.zeros(4, int),
        reward=np.zeros(4),
        next_obs=np.zeros((4, 3)),
        done=np.zeros(4),
    )
    args.update(over)
    return lambda: _dqn().update(**args)


def _td3():
    return TD3Population(2, 3, 1, 2.0, seed=0)


def _td3_update(**over):
    args = dict(
        obs=np.zeros((2, 4, 3)),
        action=np.zeros((2, 4, 1)),
        reward=np.zeros((2, 4)),
        next_obs=np.zeros((2, 4, 3)),
        done=np.zeros((2, 4)),
    )
    args.update(over)
    return lambda: _td3().update(**args)


def _started(env_id="CartPole-v1"):
    t = make_task(env_id, 2)
    t.reset()
    return t


CFG = RunConfig(total_steps=200, learning_starts=10, n_windows=2)

CASES = [
    # samplers
    ("TG p str", lambda: TruncatedGeometricSampler("0.1"), "p"),
    ("TG p bool", lambda: TruncatedGeometricSampler(True), "p"),
    ("TG p nan", lambda: TruncatedGeometricSampler(nan), "p"),
    ("TG p inf", lambda: TruncatedGeometricSampler(inf), "p"),
    ("TG p 0", lambda: TruncatedGeometricSampler(0.0), "p"),
    ("TG p >1", lambda: TruncatedGeometricSampler(1.5), "p"),
    ("TG mean_age <0", lambda: TruncatedGeometricSampler.from_expected_age(-1.0), "mean_age"),
    ("TG mean_age nan", lambda: TruncatedGeometricSampler.from_expected_age(nan), "mean_age"),
    ("TG mean_age str", lambda: TruncatedGeometricSampler.from_expected_age("3"), "mean_age"),
    ("TG recency at uniform", lambda: TruncatedGeometricSampler.from_expected_recency(4.5, 10), "mean_age"),
    ("TG recency <0", lambda: TruncatedGeometricSampler.from_expected_recency(-1.0, 10), "mean_age"),
    ("TG recency size 0", lambda: TruncatedGeometricSampler.from_expected_recency(1.0, 0), "size"),
    ("TG recency size float", lambda: TruncatedGeometricSampler.from_expected_recency(1.0, 2.5), "size"),
    ("sample size 0", lambda: TG.sample(0, 4), "size"),
    ("sample size float", lambda: TG.sample(2.5, 4), "size"),
    ("sample size bool", lambda: TG.sample(True, 4), "size"),
    ("sample batch 0", lambda: TG.sample(10, 0), "batch_size"),
    ("sample batch float", lambda: TG.sample(10, 1.5), "batch_size"),
    ("sample batch > size no replace", lambda: TG.sample(10, 11, replace=False), "batch_size"),
    ("sample rng str", lambda: TG.sample(10, 4, rng="x"), "rng"),
    ("sample rng negative", lambda: TG.sample(10, 4, rng=-1), "rng"),
    ("sample replace str", lambda: TG.sample(10, 4, replace="no"), "replace"),
    ("pmf size 0", lambda: TG.pmf(0), "size"),
    ("expected_recency size -1", lambda: TG.expected_recency(-1), "size"),
    ("entropy size float", lambda: TG.entropy(3.0), "size"),
    ("uniform pmf size 0", lambda: UniformSampler().pmf(0), "size"),
    ("window 0", lambda: RecencyWindowSampler(0), "window"),
    ("window float", lambda: RecencyWindowSampler(2.5), "window"),
    ("window str", lambda: RecencyWindowSampler("5"), "window"),
    ("window size 0", lambda: RecencyWindowSampler(3).pmf(0), "size"),
    ("matched_to not a sampler", lambda: RecencyWindowSampler.matched_to("tg", 10), "sampler"),
    ("matched reference", lambda: MatchedWindowSampler("tg"), "reference"),
    ("matched size 0", lambda: MatchedWindowSampler(TG).window(0), "size"),
    ("make_sampler unknown", lambda: make_sampler("rank"), "name"),
    ("make_sampler non-str", lambda: make_sampler(5), "name"),
    ("make_sampler uniform kwargs", lambda: make_sampler("uniform", p=0.1), "make_sampler"),
    ("make_sampler tg both", lambda: make_sampler("tg", p=0.1, mean_age=3), "make_sampler"),
    ("make_sampler window missing", lambda: make_sampler("window"), "make_sampler"),
    ("make_sampler window bad", lambda: make_sampler("window", window=-2), "window"),
    ("from_state empty", lambda: sampler_from_state({}), "state_dict"),
    ("from_state params list", lambda: sampler_from_state({"name": "tg", "params": []}), "state_dict"),
    ("from_state unknown", lambda: sampler_from_state({"name": "zzz", "params": {}}), "name"),
    ("load_state_dict other", lambda: TG.load_state_dict(UniformSampler().state_dict()), "state_dict"),
    ("tg mean p 0", lambda: truncated_geometric_mean(0.0, 10), "p"),
    ("tg mean p nan", lambda: truncated_geometric_mean(nan, 10), "p"),
    ("tg mean size 0", lambda: truncated_geometric_mean(0.5, 0), "size"),
    # diagnostics
    ("volume batch 0", lambda: replay_volume(0, 1), "batch_size"),
    ("volume batch nan", lambda: replay_volume(nan, 1), "batch_size"),
    ("volume batch str", lambda: replay_volume("32", 1), "batch_size"),
    ("volume utd 0", lambda: replay_volume(32, 0), "updates_per_step"),
    ("volume utd inf", lambda: replay_volume(32, inf), "updates_per_step"),
    ("pmf empty", lambda: sampling_entropy([]), "pmf"),
    ("pmf 2-d", lambda: expected_recency([[0.5, 0.5]]), "pmf"),
    ("pmf nan", lambda: relative_recency([nan, 1.0]), "pmf"),
    ("pmf negative", lambda: sampling_entropy([1.5, -0.5]), "pmf"),
    ("pmf not summing", lambda: expected_recency([0.3, 0.3]), "pmf"),
    ("pmf strings", lambda: sampling_entropy(["a", "b"]), "pmf"),
    ("monitor step -1", lambda: ReplayMonitor().step(-1), "n"),
    ("monitor step float", lambda: ReplayMonitor().step(1.5), "n"),
    ("monitor update empty", lambda: ReplayMonitor().update(np.array([], int), 5), "ages"),
    ("monitor update float", lambda: ReplayMonitor().update(np.array([1.5]), 5), "ages"),
    ("monitor update too old", lambda: ReplayMonitor().update(np.array([5]), 5), "ages"),
    ("monitor update negative", lambda: ReplayMonitor().update(np.array([-1]), 5), "ages"),
    ("monitor update size 0", lambda: ReplayMonitor().update(np.array([0]), 0), "size"),
    ("monitor compute nothing", lambda: ReplayMonitor().compute(), "ReplayMonitor.compute"),
    ("monitor compute no env steps", lambda: _monitor_without_steps().compute(), "ReplayMonitor.compute"),
    # sum tree and PER
    ("tree capacity 0", lambda: SumTree(0), "capacity"),
    ("tree capacity float", lambda: SumTree(2.5), "capacity"),
    ("tree set nan", lambda: _tree().set([0], [nan]), "value"),
    ("tree set inf", lambda: _tree().set([0], [inf]), "value"),
    ("tree set negative", lambda: _tree().set([0], [-1.0]), "value"),
    ("tree set mismatch", lambda: _tree().set([0, 1], [1.0, 2.0, 3.0]), "value"),
    ("tree set index high", lambda: _tree().set([8], [1.0]), "index"),
    ("tree set index -1", lambda: _tree().set([-1], [1.0]), "index"),
    ("tree set index float", lambda: _tree().set([0.5], [1.0]), "index"),
    ("tree find above", lambda: _tree().find([9.0]), "values"),
    ("tree find total", lambda: _tree().find([8.0]), "values"),
    ("tree find negative", lambda: _tree().find([-0.5]), "values"),
    ("tree find nan", lambda: _tree().find([nan]), "values"),
    ("tree find 2-d", lambda: _tree().find([[1.0]]), "values"),
    ("tree find empty tree", lambda: SumTree(4).find([0.0]), "values"),
    ("per capacity 0", lambda: PrioritizedSampler(0), "capacity"),
    ("per alpha -1", lambda: PrioritizedSampler(8, alpha=-1.0), "alpha"),
    ("per alpha nan", lambda: PrioritizedSampler(8, alpha=nan), "alpha"),
    ("per beta -1", lambda: PrioritizedSampler(8, beta=-1.0), "beta"),
    ("per eps 0", lambda: PrioritizedSampler(8, eps=0.0), "eps"),
    ("per add high", lambda: PrioritizedSampler(8).add([8]), "slots"),
    ("per add -1", lambda: PrioritizedSampler(8).add([-1]), "slots"),
    ("per add float", lambda: PrioritizedSampler(8).add([1.5]), "slots"),
    ("per update high", lambda: _per().update_priorities([8], [1.0]), "slots"),
    ("per update -1", lambda: _per().update_priorities([-1], [1.0]), "slots"),
    ("per update float slot", lambda: _per().update_priorities([0.5], [1.0]), "slots"),
    ("per update mismatch", lambda: _per().update_priorities([0, 1], [1.0]), "td_errors"),
    ("per update nan", lambda: _per().update_priorities([0], [nan]), "td_errors"),
    ("per sample 0", lambda: _per().sample(0), "batch_size"),
    ("per sample float", lambda: _per().sample(1.5), "batch_size"),
    ("per sample empty", lambda: PrioritizedSampler(8).sample(2), "PrioritizedSampler"),
    ("per sample rng", lambda: _per().sample(2, rng="x"), "rng"),
    ("per load_state_dict", lambda: _per().load_state_dict({}), "state_dict"),
    (
        "per load other capacity",
        lambda: _per().load_state_dict(PrioritizedSampler(9).state_dict()),
        "state_dict",
    ),
    # ring buffer
    ("buffer capacity 0", lambda: RingBuffer(0, (2,)), "capacity"),
    ("buffer obs_shape 0", lambda: RingBuffer(5, (0,)), "obs_shape"),
    ("buffer obs_shape str", lambda: RingBuffer(5, "ab"), "obs_shape"),
    ("buffer obs_dtype int", lambda: RingBuffer(5, (2,), obs_dtype=np.int64), "obs_dtype"),
    ("buffer action_dtype str", lambda: RingBuffer(5, (2,), action_dtype=np.str_), "action_dtype"),
    ("buffer sampler str", lambda: RingBuffer(5, (2,), sampler="tg"), "sampler"),
    ("buffer per capacity", lambda: RingBuffer(5, (2,), sampler=PrioritizedSampler(6)), "sampler"),
    ("buffer seed -1", lambda: RingBuffer(5, (2,), seed=-1), "seed"),
    ("add obs shape", _add(obs=np.zeros((2, 3))), "obs"),
    ("add obs nan", _add(obs=np.full((2, 2), nan)), "obs"),
    ("add obs empty", _add(obs=np.zeros((0, 2))), "obs"),
    ("add float action into int storage", _add(action=np.array([0.5, 1.7])), "action"),
    ("add action rows", _add(action=np.zeros(3, int)), "action"),
    ("add reward rows", _add(reward=np.zeros(3)), "reward"),
    ("add reward nan", _add(reward=np.array([nan, 0.0])), "reward"),
    ("add next_obs shape", _add(next_obs=np.zeros((2, 1))), "next_obs"),
    ("add done 2", _add(done=np.array([2, 0])), "done"),
    ("add done 0.5", _add(done=np.array([0.5, 0.0])), "done"),
    ("add done str", _add(done=np.array(["a", "b"])), "done"),
    ("buffer sample empty", lambda: RingBuffer(5, (2,)).sample(2), "RingBuffer.sample"),
    ("buffer sample 0", lambda: _buf().sample(0), "batch_size"),
    ("buffer sample float", lambda: _buf().sample(1.5), "batch_size"),
    ("buffer sample no replace too many", lambda: _buf().sample(4, replace=False), "batch_size"),
    (
        "buffer per no replace",
        lambda: _buf(sampler=PrioritizedSampler(10)).sample(2, replace=False),
        "replace",
    ),
    ("ages_to_slots too old", lambda: _buf().ages_to_slots([3]), "ages"),
    ("ages_to_slots negative", lambda: _buf().ages_to_slots([-1]), "ages"),
    ("ages_to_slots float", lambda: _buf().ages_to_slots([0.5]), "ages"),
    ("slots_to_ages too high", lambda: _buf().slots_to_ages([7]), "slots"),
    ("buffer load_state_dict", lambda: _buf().load_state_dict({}), "state_dict"),
    (
        "buffer load other capacity",
        lambda: _buf().load_state_dict(RingBuffer(11, (2,)).state_dict()),
        "state_dict",
    ),
    # learners
    ("dqn hidden 0", lambda: DQNConfig(hidden=0), "hidden"),
    ("dqn lr 0", lambda: DQNConfig(lr=0.0), "lr"),
    ("dqn gamma", lambda: DQNConfig(gamma=1.5), "gamma"),
    ("dqn target_every", lambda: DQNConfig(target_every=0), "target_every"),
    ("dqn tau", lambda: DQNConfig(tau=0.0), "tau"),
    ("dqn betas", lambda: DQNConfig(adam_betas=(1.0, 0.9)), "adam_betas"),
    ("dqn huber", lambda: DQNConfig(huber_delta=0.0), "huber_delta"),
    ("NumpyDQN obs_dim", lambda: NumpyDQN(0, 2), "obs_dim"),
    ("NumpyDQN n_actions", lambda: NumpyDQN(3, 0), "n_actions"),
    ("NumpyDQN config", lambda: NumpyDQN(3, 2, config="x"), "config"),
    ("act epsilon 1.5", lambda: _dqn().act(np.zeros((2, 3)), 1.5), "epsilon"),
    ("act epsilon nan", lambda: _dqn().act(np.zeros((2, 3)), nan), "epsilon"),
    ("act epsilon -0.1", lambda: _dqn().act(np.zeros((2, 3)), -0.1), "epsilon"),
    ("act obs shape", lambda: _dqn().act(np.zeros((2, 4)), 0.1), "obs"),
    ("act obs nan", lambda: _dqn().act(np.full((2, 3), nan), 0.1), "obs"),
    ("q_values obs shape", lambda: _dqn().q_values(np.zeros(3)), "obs"),
    ("update action -1", _dqn_update(action=np.array([0, -1, 0, 1])), "action"),
    ("update action 2", _dqn_update(action=np.array([0, 2, 0, 1])), "action"),
    ("update action float", _dqn_update(action=np.array([0.0, 1.0, 0.0, 1.0])), "action"),
    ("update action rows", _dqn_update(action=np.zeros(3, int)), "action"),
    ("update reward nan", _dqn_update(reward=np.array([nan, 0, 0, 0])), "reward"),
    ("update done 2", _dqn_update(done=np.array([2, 0, 0, 0])), "done"),
    ("update weights negative", _dqn_update(weights=np.array([1.0, -1.0, 1.0, 1.0])), "weights"),
    ("update next_obs shape", _dqn_update(next_obs=np.zeros((4, 2))), "next_obs"),
    ("population n_agents", lambda: DQNPopulation(0, 3, 2), "n_agents"),
    (
        "population update shape",
        lambda: DQNPopulation(2, 3, 2).update(
            np.zeros((1, 4, 3)),
            np.zeros((1, 4), int),
            np.zeros((1, 4)),
            np.zeros((1, 4, 3)),
            np.zeros((1, 4)),
        ),
        "obs",
    ),
    ("td3 tau", lambda: TD3Config(tau=0.0), "tau"),
    ("td3 policy_delay", lambda: TD3Config(policy_delay=0), "policy_delay"),
    ("td3 target_noise", lambda: TD3Config(target_noise=-0.1), "target_noise"),
    ("td3 gamma", lambda: TD3Config(gamma=2.0), "gamma"),
    ("td3 max_action", lambda: TD3Population(1, 3, 1, 0.0), "max_action"),
    ("td3 act_dim", lambda: TD3Population(1, 3, 0), "act_dim"),
    ("td3 act noise", lambda: _td3().act(np.zeros((2, 4, 3)), -0.1), "noise"),
    ("td3 update action beyond", _td3_update(action=np.full((2, 4, 1), 3.0)), "action"),
    ("td3 update done", _td3_update(done=np.full((2, 4), 2.0)), "done"),
    ("td3 update reward shape", _td3_update(reward=np.zeros((2, 3))), "reward"),
    # tasks
    ("task unknown", lambda: make_task("MountainCar-v0", 2), "env_id"),
    ("task num_envs 0", lambda: make_task("CartPole-v1", 0), "num_envs"),
    ("task seed -1", lambda: make_task("CartPole-v1", 2, seed=-1), "seed"),
    ("task streams length", lambda: make_task("CartPole-v1", 2, streams=[0]), "streams"),
    ("task streams negative", lambda: make_task("CartPole-v1", 2, streams=[0, -1]), "streams"),
    ("task step before reset", lambda: make_task("CartPole-v1", 2).step(np.zeros(2, int)), "reset"),
    ("task action range", lambda: _started().step(np.array([0, 2])), "action"),
    ("task action float", lambda: _started().step(np.array([0.0, 1.0])), "action"),
    ("task action shape", lambda: _started().step(np.zeros(3, int)), "action"),
    ("task pendulum nan", lambda: _started("Pendulum-v1").step(np.array([[nan], [0.0]])), "action"),
    # training
    ("run env_id", lambda: RunConfig(env_id="MountainCar-v0"), "env_id"),
    ("run total_steps", lambda: RunConfig(total_steps=0), "total_steps"),
    ("run learning_starts -5", lambda: RunConfig(learning_starts=-5), "learning_starts"),
    (
        "run learning_starts >= budget",
        lambda: RunConfig(total_steps=100, learning_starts=100),
        "learning_starts",
    ),
    ("run num_envs", lambda: RunConfig(num_envs=0), "num_envs"),
    ("run batch_size", lambda: RunConfig(batch_size=0), "batch_size"),
    ("run eps_start", lambda: RunConfig(eps_start=1.5), "eps_start"),
    ("run eps order", lambda: RunConfig(eps_start=0.1, eps_end=0.5), "eps_start"),
    ("run eps_fraction", lambda: RunConfig(eps_fraction=0.0), "eps_fraction"),
    ("run action_noise", lambda: RunConfig(action_noise=-1.0), "action_noise"),
    ("run n_windows", lambda: RunConfig(n_windows=0), "n_windows"),
    ("run dqn", lambda: RunConfig(dqn="x"), "dqn"),
    ("population empty", lambda: run_population([], CFG, seed=0), "samplers"),
    ("population not a list", lambda: run_population(UniformSampler(), CFG, seed=0), "samplers"),
    ("population bad member", lambda: run_population([UniformSampler(), "tg"], CFG, seed=0), "samplers[1]"),
    ("population cfg", lambda: run_population([UniformSampler()], "cfg", seed=0), "cfg"),
    ("population seed", lambda: run_population([UniformSampler()], CFG, seed=-1), "seed"),
    (
        "population batch_sizes length",
        lambda: run_population([UniformSampler()], CFG, seed=0, batch_sizes=[4, 8]),
        "batch_sizes",
    ),
    (
        "population batch_sizes 0",
        lambda: run_population([UniformSampler()], CFG, seed=0, batch_sizes=[0]),
        "batch_sizes[0]",
    ),
    ("population per capacity", lambda: run_population([PrioritizedSampler(7)], CFG, seed=0), "samplers[0]"),
    (
        "run_dqn continuous",
        lambda: run_dqn(
            lambda c: UniformSampler(),
            RunConfig(env_id="Pendulum-v1", total_steps=200, learning_starts=10),
            seed=0,
        ),
        "cfg.env_id",
    ),
    ("run_td3 discrete", lambda: run_td3(lambda c: UniformSampler(), CFG, seed=0), "cfg.env_id"),
    # experiment
    ("config batches", lambda: TGReplayConfig(batch_sizes=(8, 4, 2)), "batch_sizes"),
    ("config tasks", lambda: TGReplayConfig(tasks=("X",)), "tasks"),
    ("config fraction", lambda: TGReplayConfig(tg_mean_age_fraction=0.0), "tg_mean_age_fraction"),
    ("config run_config task", lambda: TGReplayConfig().run_config("X"), "task"),
    ("timing size 0", lambda: sampling_time_ratio(size=0), "size"),
    ("timing repeats 1", lambda: sampling_time_ratio(size=100, repeats=1), "repeats"),
]


def _monitor_without_steps():
    m = ReplayMonitor()
    m.update(np.array([0, 1]), 4)
    return m


def test_battery_covers_the_api():
    assert len(CASES) >= 185
    assert len({name for name, _, _ in CASES}) == len(CASES)


@pytest.mark.parametrize(("name", "call", "arg"), CASES, ids=[c[0] for c in CASES])
def test_bad_input_gives_a_clear_error(name, call, arg):
    with pytest.raises((ValueError, TypeError, RuntimeError)) as info:
        call()
    msg = str(info.value)
    assert "\n" not in msg, msg
    assert arg in msg, f"{name}: message does not name {arg!r}: {msg}"
    raiser = traceback.extract_tb(info.tb)[-1].filename.replace("\\", "/")
    assert "/paperworks/tg_replay/" in raiser or "/paperworks/core/validate" in raiser, (
        f"{name}: raised from {raiser}, not from the package's own checks: {msg}"
    )


def test_integrations_bad_input():
    pytest.importorskip("torchrl")
    from paperworks.tg_replay.torchrl_sampler import TGSampler

    for call, arg in (
        (lambda: TGSampler(), "p"),
        (lambda: TGSampler(p=2.0), "p"),
        (lambda: TGSampler(p=0.1, seed=-1), "seed"),
        (lambda: TGSampler(p=0.1).load_state_dict({"last": 0}), "state_dict"),
        (
            lambda: TGSampler(p=0.1).load_state_dict({"last": -2, "rng": {}, "sampler": TG.state_dict()}),
            "last",
        ),
    ):
        with pytest.raises((ValueError, TypeError)) as info:
            call()
        assert arg in str(info.value)
