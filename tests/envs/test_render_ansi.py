"""render_mode="ansi" on every text environment: the turn, the call, the result and the
running log head of each step, then the score and the head to pin."""

from __future__ import annotations

import json

import gymnasium
import pytest

import batchgate_gym  # noqa: F401  (registers the ids)
from batchgate_gym.desks import registry
from batchgate_gym.envs.gate import team
from batchgate_gym.envs.refund import team as refund_team
from batchgate_gym.envs.text_env import LOG_HEAD_SHOWN
from batchgate_gym.policies.gate.team import CarefulWithClaims

DESKS = ["gate", "refund", "analyst"]


def play_recording(env, policy, seed=0):
    """Play one episode, noting what the transcript must show after each step."""
    observation, info = env.reset(seed=seed)
    policy.reset(observation, info)
    ledger = env.unwrapped.world.ledger
    steps = []
    done = False
    while not done:
        action = policy.act(observation)
        observation, _, terminated, truncated, info = env.step(action)
        steps.append((info["turn"], action, observation, len(ledger), ledger.head))
        done = terminated or truncated
    return steps, info


@pytest.mark.parametrize("name", DESKS)
def test_render_shows_every_step_and_the_score(name):
    desk = registry.get(name)
    env = gymnasium.make(desk.env_id, split=desk.cases.default_split, render_mode="ansi")
    steps, info = play_recording(env, desk.policies.reference_policies["careful"]())
    text = env.render()
    max_turns = env.unwrapped.limits.max_turns
    blocks = text.split("\n\n--- turn ")
    assert len(blocks) == len(steps) + 1  # the opening task, then one block per step
    for block, (turn, action, observation, entries, head) in zip(blocks[1:], steps, strict=True):
        header = f"{turn} of {max_turns} | log: {entries} entries, head {head[:LOG_HEAD_SHOWN]} ---"
        assert block.startswith(f"{header}\nACTION:\n{action}\nRESULT:\n{observation}")
    ending = text.rsplit("\n\n", 1)[1]
    assert ending.startswith("=== episode over | score ")
    assert ending.endswith(f"head {info['log_head']} ===")
    assert json.loads(ending.split("| score ", 1)[1].split(" | log:", 1)[0]) == info["score"]
    assert text.count("=== episode over") == 1
    assert env.render() == text  # rendering changes nothing
    env.close()


@pytest.mark.filterwarnings("ignore:.*render_mode='rgb_array'")
def test_render_is_none_without_ansi_and_other_modes_are_refused():
    env = gymnasium.make("batchgate_gym/RefundDesk-v0")
    env.reset(seed=0)
    assert env.render() is None
    with pytest.raises(ValueError, match="render_mode"):
        gymnasium.make("batchgate_gym/AnalystDesk-v0", render_mode="rgb_array")


@pytest.mark.parametrize("env_id", ["batchgate_gym/BadBatchGateMacro-v0", "batchgate_gym/RefundDeskMacro-v0"])
def test_macro_envs_render_the_text_calls_they_send(env_id):
    env = gymnasium.make(env_id, render_mode="ansi")
    _, info = env.reset(seed=3)
    env.step(int(info["action_mask"].nonzero()[0][0]))
    text = env.render()
    assert "\n\n--- turn 1 of " in text and "\nACTION:\n" in text and "\nRESULT:\nturn 1 of " in text


def test_team_render_names_the_agent_and_ends_once():
    game = team.env(n_agents=2, render_mode="ansi")
    game.reset(seed=7)
    policies = {agent: CarefulWithClaims() for agent in game.agents}
    for agent, policy in policies.items():
        policy.reset(game.observe(agent)["text"], {})
    for agent in game.agent_iter():
        observation, _, terminated, truncated, _ = game.last()
        game.step(None if terminated or truncated else policies[agent].act(observation["text"]))
    text = game.render()
    assert "\n\n--- gate_0 turn 1 of " in text and "\n\n--- gate_1 turn 1 of " in text
    assert text.count("=== episode over") == 1
    assert text.endswith(f"head {game.unwrapped.game.world.ledger.head} ===")
    workers = refund_team.parallel_env(render_mode="ansi")
    workers.reset(seed=1)
    workers.step({agent: "wait()" for agent in workers.agents})
    assert "\n\n--- refund_1 turn 1 of " in workers.render()


@pytest.mark.parametrize("env_id", ["batchgate_gym/BadBatchGate-v0", "batchgate_gym/RefundDeskMacro-v0"])
def test_human_mode_prints_the_transcript_as_the_episode_goes(env_id, capsys):
    env = gymnasium.make(env_id, render_mode="human")
    try:
        _, info = env.reset(seed=3)
        opened = capsys.readouterr().out
        action = int(info["action_mask"].nonzero()[0][0]) if "action_mask" in info else "list_batches()"
        env.step(action)
        stepped = capsys.readouterr().out
        assert env.render() is None
    finally:
        env.close()
    assert opened.startswith(("You gate tonight's warehouse load.", "You work the refund desk"))
    assert "ACTION:\n" in opened + stepped and stepped.startswith("--- turn")
