"""COMPOSE: multi-view 3D human pose association as a weighted exact cover over a hypergraph of person
hypotheses (arXiv 2601.09698), with an exact ILP (HiGHS, CP-SAT) and loopy belief propagation, the
pairwise baselines it replaces, generated rigs, loaders and VoxelPose-style AP."""

from .associator import METHODS, Association, MultiViewAssociator, finalize_groups
from .baselines import BASELINES, greedy_triangulation, hungarian_union_find, permutation_sync
from .cameras import Camera, fundamental_matrix, make_rig
from .data import JOINTS, N_JOINTS, Frame, SceneConfig, make_frame, make_people
from .hypergraph import Hypergraph, PruningConfig, build_hypergraph, full_candidate_count
from .io import camera_from_dict, load_coco_keypoints, load_panoptic_calibration
from .metrics import FrameResult, average_precision, evaluate, mpjpe_matrix
from .solvers import SOLVERS, BPResult, solve, solve_bp, solve_cpsat, solve_ilp
from .triangulate import reprojection_error, robust_triangulate, triangulate, triangulate_batch

__all__ = [
    "BASELINES",
    "JOINTS",
    "METHODS",
    "N_JOINTS",
    "SOLVERS",
    "Association",
    "BPResult",
    "Camera",
    "Frame",
    "FrameResult",
    "Hypergraph",
    "MultiViewAssociator",
    "PruningConfig",
    "SceneConfig",
    "average_precision",
    "build_hypergraph",
    "camera_from_dict",
    "evaluate",
    "finalize_groups",
    "full_candidate_count",
    "fundamental_matrix",
    "greedy_triangulation",
    "hungarian_union_find",
    "load_coco_keypoints",
    "load_panoptic_calibration",
    "make_frame",
    "make_people",
    "make_rig",
    "mpjpe_matrix",
    "permutation_sync",
    "reprojection_error",
    "robust_triangulate",
    "solve",
    "solve_bp",
    "solve_cpsat",
    "solve_ilp",
    "triangulate",
    "triangulate_batch",
]
