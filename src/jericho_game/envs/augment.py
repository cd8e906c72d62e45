"""Symmetry augmentation of training batches (flat or planar observations, masks, policies).

The board has four symmetries that the rules respect (:data:`SYMMETRIES`: the identity,
the left-right ``mirror``, the ``half-turn`` that swaps the sides, and ``flip``, the two
composed); the tests prove, position by position, that transforming an encoding equals
encoding the transformed position.  A position's value for the observer is the same in
each image, so a batch ``(observations, masks, policies, values)`` from self-play can be
multiplied by four::

    from jericho_game.envs.augment import augment
    obs4, masks4, pols4 = augment(obs, masks, policies)   # shapes (4, B, ...) each
    values4 = np.broadcast_to(values, (4, *values.shape))

Everything works on whole batches with one gather per array (no Python loop per item).
"""

from __future__ import annotations

from collections.abc import Sequence

from jericho_game.extras import missing_extra

try:
    import numpy as np
except ImportError as exc:
    raise missing_extra("symmetry augmentation", "rl", exc) from exc

from jericho_game.envs.encoding import SYMMETRIES, Encoding, default_encoding
from jericho_game.envs.planar import Planar, default_planar

__all__ = ["augment", "SYMMETRIES"]


def augment(
    observations: np.ndarray,
    masks: np.ndarray | None = None,
    policies: np.ndarray | None = None,
    symmetries: Sequence[str] = SYMMETRIES,
    encoding: Encoding | None = None,
) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
    """The images of a batch under each symmetry, stacked on a new first axis.

    ``observations`` are flat ``(..., n_obs)`` or planar ``(..., C, H, W)``
    (:mod:`jericho_game.envs.planar`); ``masks`` and ``policies`` are per-action arrays
    ``(..., n_actions)``.  Returns arrays of shape ``(len(symmetries), ...)``, image ``k``
    under ``symmetries[k]`` (the first, by default, is the identity: the batch itself).
    """
    enc = encoding or default_encoding()
    obs = np.asarray(observations)
    planar: Planar | None = None
    if obs.shape[-1] != enc.observation_size:
        planar = default_planar() if encoding is None else Planar(enc)
        if obs.shape[-3:] != planar.shape:
            raise ValueError(
                f"observations of shape {obs.shape}: expected (..., {enc.observation_size}) or (..., {planar.shape})"
            )
        flat = planar.to_flat(obs)
    else:
        flat = obs
    syms = [enc.symmetry(name) for name in symmetries]
    images = np.stack([s.observations(flat) for s in syms])
    if planar is not None:
        images = planar.from_flat(images)
    out_masks = None if masks is None else np.stack([s.masks(masks) for s in syms])
    out_policies = None if policies is None else np.stack([s.masks(policies) for s in syms])
    return images, out_masks, out_policies
