"""Scan speed per 1 KB entry, start-up cost and corpus rates: memrepo's scanner beside a
Hermes-style regex list.

Run: python bench/bench_scan.py [--corpus PATH] [--entries N] [--startup-runs N]
It measures the memrepo it imports: the default pure-Python build, or the compiled one
(HATCH_BUILD_HOOK_ENABLE_MYPYC=true pip install . in another venv, then that venv's python).
Prints figures; asserts nothing. Times are CPU time (this thread, or the child process for
start-up) beside wall time: on a loaded machine wall time mostly measures the neighbours.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from make_train_corpus import NOT_YET_TRAINED  # training sets the shipped model has not seen

ROOT = Path(__file__).resolve().parents[1]
DEV = ROOT.parent / "shared" / "corpus" / "injection-dev.jsonl"
OWN = ROOT / "tests" / "data" / "detect" / "corpus.jsonl"
DETECT = ROOT / "tests" / "data" / "detect"
# Held-out sets by number: each written unseen by an author who read neither the detector nor any
# corpus, measured once (UNSEEN), and what happened to it since.
HELDOUT = {2: "tuned on", 3: "tuned on", 4: "tuned on", 5: "tuned and trained on", 6: "trained on",
           **{n: "rules informed by it, trained on" for n in range(7, 28)}, 28: "trained on, rules never tuned on it",
           **{n: "rules informed by it, trained on" for n in range(29, 49)},
           **{n: "trained on, rules never tuned on it" for n in range(49, 59)},
           **{n: "rules informed by it, trained on" for n in range(59, 121)},
           **{n: "rules informed by it, trained on" for n in range(121, 153)},
           **{n: "rules informed by its false alarms, trained on" for n in range(153, 169)},
           **{n: "trained on, rules never tuned on it" for n in range(169, 193)},
           **{n: "rules informed by its false alarms, trained on" for n in range(193, 225)},
           **{n: "trained on, rules never tuned on it" for n in range(225, 249)},
           **{n: "rules informed by its false alarms, trained on" for n in range(249, 257)},
           **{n: "trained on, rules never tuned on it" for n in range(257, 265)}, 260: "rules informed by its false alarms, trained on",
           **{n: "release 18's threshold chosen on it, trained on" for n in range(265, 273)},
           **{n: "rules informed by its false alarms, trained on" for n in range(273, 289)},
           **{n: "release 19's threshold chosen on it, trained on since release 21" for n in range(289, 297)},
           **{n: "never tuned on, trained on since release 21" for n in range(297, 321)},
           **{n: "release 20's threshold validation, trained on since release 21" for n in range(321, 329)},
           **{n: "rules informed by its false alarms; release 20's threshold validation, trained on since release 21" for n in range(329, 337)},
           **{n: "rules informed by its false alarms, trained on since release 21" for n in range(337, 345)},
           **{n: "rules informed by its false alarms, trained on since release 21" for n in range(345, 353)},
           **{n: "rules informed by its false alarms, trained on since release 21" for n in range(353, 361)},
           **{n: "rules informed by its false alarms, trained on since release 21" for n in range(361, 377)},
           **{n: "the joined decoder and rules informed by it; two learned-layer variants tested on it, trained on since release 21" for n in range(377, 385)},
           **{n: "never tuned on, trained on since release 21" for n in range(385, 393)},
           **{n: "rules informed by its false alarms; 393-400 chose release 21's threshold; trained on since release 22" for n in range(393, 409)},
           **{n: "never tuned on, trained on since release 22" for n in range(409, 425)},
           **{n: "a reconstructed brief, more languages; rules informed by it (round 32), trained on since release 22" for n in range(425, 433)},
           **{n: "a reconstructed brief, more languages; chose release 22's threshold, never tuned or trained on" for n in range(433, 441)},
           **{n: "release 22's test; rules informed by it (round 33), never trained on" for n in range(441, 449)},
           **{n: "written while release 22 was tested; rules informed by it (round 33), never trained on" for n in range(449, 457)},
           **{n: "never tuned or trained on (written 2026-12-03 during round 33)" for n in range(457, 465)}}
EXTRA = sorted((ROOT / "bench" / "train_extra").glob("extra_*.jsonl"))  # written for training only
# Each held-out set was measured once while unseen, before its tuning round (detection / false alarms):
UNSEEN = {"heldout2.jsonl": "75.3% / 10.0%", "heldout3.jsonl": "76.5% / 7.0%", "heldout4.jsonl": "73.3% / 8.0%",
          "heldout5.jsonl": "57.3% / 13.3%", "heldout6.jsonl": "60.0% / 10.7%", "heldout7.jsonl": "61.3% / 6.0%",
          "heldout8.jsonl": "87.3% / 13.3% with a more eager classifier (threshold p 0.921)",
          "heldout9.jsonl": "72.0% / 3.3%", "heldout10.jsonl": "94.0% / 7.3%",
          "heldout11.jsonl": "86.0% / 6.7%", "heldout12.jsonl": "83.3% / 16.0%",
          "heldout13.jsonl": "86.0% / 8.7%", "heldout14.jsonl": "91.3% / 7.3%",
          "heldout15.jsonl": "86.0% / 6.0%", "heldout16.jsonl": "81.3% / 2.0%",
          "heldout17.jsonl": "86.0% / 3.3%", "heldout18.jsonl": "83.3% / 2.7%",
          "heldout19.jsonl": "83.3% / 0.0%", "heldout20.jsonl": "86.0% / 4.7%",
          "heldout21.jsonl": "81.3% / 6.7%", "heldout22.jsonl": "81.3% / 1.3%",
          "heldout23.jsonl": "88.7% / 3.3%", "heldout24.jsonl": "90.0% / 2.0%",
          "heldout25.jsonl": "80.0% / 2.0%", "heldout26.jsonl": "86.7% / 1.3%",
          "heldout27.jsonl": "88.0% / 2.0%", "heldout28.jsonl": "85.3% / 1.3%",
          "heldout29.jsonl": "82.0% / 4.7%", "heldout30.jsonl": "91.3% / 6.0%",
          "heldout31.jsonl": "83.3% / 5.3%", "heldout32.jsonl": "86.7% / 8.0%",
          "heldout33.jsonl": "88.0% / 2.0%", "heldout34.jsonl": "90.7% / 6.7%",
          "heldout35.jsonl": "85.3% / 4.0%", "heldout36.jsonl": "87.3% / 12.7%",
          "heldout37.jsonl": "88.0% / 4.0%", "heldout38.jsonl": "86.7% / 5.3%",
          "heldout39.jsonl": "88.7% / 5.3%", "heldout40.jsonl": "90.0% / 10.7%",
          "heldout41.jsonl": "89.3% / 2.7%", "heldout42.jsonl": "90.7% / 7.3%",
          "heldout43.jsonl": "87.3% / 3.3%", "heldout44.jsonl": "88.7% / 5.3%",
          "heldout45.jsonl": "94.0% / 4.0%", "heldout46.jsonl": "85.3% / 3.3%",
          "heldout47.jsonl": "88.0% / 4.0%", "heldout48.jsonl": "89.3% / 4.0%",
          "heldout49.jsonl": "83.3% / 6.0% (release 7: the same)", "heldout50.jsonl": "88.7% / 8.7% (release 7: the same)",
          # heldout51-60 by release 8's final scanner
          "heldout51.jsonl": "82.7% / 6.0%", "heldout52.jsonl": "89.3% / 3.3%", "heldout53.jsonl": "81.3% / 3.3%",
          "heldout54.jsonl": "69.3% / 7.3%", "heldout55.jsonl": "83.3% / 6.0%", "heldout56.jsonl": "91.3% / 2.0%",
          "heldout57.jsonl": "77.3% / 4.0%", "heldout58.jsonl": "84.7% / 3.3%", "heldout59.jsonl": "86.0% / 4.0%; release 9's: 90.0% / 2.7%",
          "heldout60.jsonl": "81.3% / 2.7%; release 9's: 85.3% / 2.0%",
          # heldout61-63 by release 9's final scanner
          "heldout61.jsonl": "90.7% / 4.7%", "heldout62.jsonl": "87.3% / 2.7%", "heldout63.jsonl": "86.0% / 1.3%",
          # heldout64-66 by release 9's final scanner, then once by release 10's
          "heldout64.jsonl": "87.3% / 0.7%; release 10's: 89.3% / 0.7%",
          "heldout65.jsonl": "89.3% / 7.3%; release 10's: 89.3% / 8.0%",
          "heldout66.jsonl": "84.0% / 2.7%; release 10's: 84.7% / 2.0%",
          # heldout67-78 by release 9's final scanner and by release 10's (bfbe302), the same day
          "heldout67.jsonl": "87.3% / 3.3%; release 10's: 87.3% / 3.3%", "heldout68.jsonl": "94.7% / 2.0%; release 10's: 95.3% / 2.0%",
          "heldout69.jsonl": "88.0% / 1.3%; release 10's: 88.0% / 1.3%", "heldout70.jsonl": "87.3% / 3.3%; release 10's: 86.7% / 2.0%",
          "heldout71.jsonl": "76.0% / 3.3%; release 10's: 77.3% / 3.3%", "heldout72.jsonl": "94.0% / 4.7%; release 10's: 95.3% / 4.7%",
          "heldout73.jsonl": "92.7% / 3.3%; release 10's: 94.7% / 4.0%", "heldout74.jsonl": "82.7% / 4.0%; release 10's: 85.3% / 4.0%",
          "heldout75.jsonl": "82.0% / 3.3%; release 10's: 84.7% / 3.3%", "heldout76.jsonl": "78.0% / 1.3%; release 10's: 79.3% / 1.3%",
          "heldout77.jsonl": "87.3% / 3.3%; release 10's: 90.7% / 4.0%", "heldout78.jsonl": "88.7% / 4.0%; release 10's: 90.0% / 4.0%",
          # heldout79-80 (half in the languages of extra_za-zf) by release 9's and release 10's (a385f00) scanners
          "heldout79.jsonl": "74.7% / 4.7%; release 10's: 77.3% / 6.0%", "heldout80.jsonl": "64.7% / 2.7%; release 10's: 66.7% / 2.7%",
          # heldout81-86 by release 10's final scanner (e0faaa2), then by release 11's (never tuned on)
          "heldout81.jsonl": "86.0% / 3.3%; release 11's: 88.0% / 4.7%", "heldout82.jsonl": "93.3% / 2.7%; release 11's: 94.0% / 2.0%",
          "heldout83.jsonl": "82.7% / 2.7%; release 11's: 90.7% / 4.0%", "heldout84.jsonl": "82.0% / 2.7%; release 11's: 84.7% / 2.0%",
          "heldout85.jsonl": "95.3% / 2.7%; release 11's: 96.0% / 2.0%", "heldout86.jsonl": "78.0% / 1.3%; release 11's: 80.7% / 1.3%",
          # heldout87-92, written after release 11 was final: release 10's final scanner, then release 11's, the same day
          "heldout87.jsonl": "91.3% / 6.0%; release 11's: 93.3% / 4.7%", "heldout88.jsonl": "86.7% / 3.3%; release 11's: 85.3% / 3.3%",
          "heldout89.jsonl": "93.3% / 4.7%; release 11's: 93.3% / 5.3%", "heldout90.jsonl": "77.3% / 0.7%; release 11's: 81.3% / 0.7%",
          "heldout91.jsonl": "90.0% / 1.3%; release 11's: 94.0% / 0.7%", "heldout92.jsonl": "74.7% / 0.7%; release 11's: 77.3% / 0.7%",
          # heldout93-104, written once release 12's rules were final: release 11's final scanner (d913fd7),
          # then release 12's, the same day
          "heldout93.jsonl": "93.3% / 2.7%; release 12's: 94.7% / 2.7%", "heldout94.jsonl": "90.7% / 3.3%; release 12's: 91.3% / 3.3%",
          "heldout95.jsonl": "90.7% / 9.3%; release 12's: 92.0% / 9.3%", "heldout96.jsonl": "74.0% / 4.7%; release 12's: 77.3% / 4.0%",
          "heldout97.jsonl": "89.3% / 4.0%; release 12's: 90.0% / 4.7%", "heldout98.jsonl": "84.0% / 2.0%; release 12's: 84.7% / 2.7%",
          "heldout99.jsonl": "89.3% / 1.3%; release 12's: 92.0% / 2.0%", "heldout100.jsonl": "88.7% / 2.0%; release 12's: 91.3% / 2.0%",
          "heldout101.jsonl": "90.0% / 0.0%; release 12's: 91.3% / 1.3%", "heldout102.jsonl": "84.7% / 4.0%; release 12's: 86.7% / 4.0%",
          "heldout103.jsonl": "91.3% / 4.7%; release 12's: 94.0% / 4.0%", "heldout104.jsonl": "86.0% / 2.7%; release 12's: 87.3% / 3.3%",
          # heldout105-112, written before any change of release 13 and measured only after it was final:
          # release 12's final scanner (d7ae0bd), then release 13's, the same day
          "heldout105.jsonl": "86.7% / 1.3%; release 13's: 89.3% / 1.3%", "heldout106.jsonl": "80.0% / 6.7%; release 13's: 82.0% / 5.3%",
          "heldout107.jsonl": "85.3% / 2.7%; release 13's: 87.3% / 2.7%", "heldout108.jsonl": "70.7% / 2.0%; release 13's: 77.3% / 2.7%",
          "heldout109.jsonl": "71.3% / 1.3%; release 13's: 80.7% / 2.0%", "heldout110.jsonl": "86.0% / 2.0%; release 13's: 88.7% / 2.0%",
          "heldout111.jsonl": "94.7% / 3.3%; release 13's: 94.7% / 3.3%", "heldout112.jsonl": "68.0% / 2.0%; release 13's: 76.7% / 1.3%",
          # heldout113-120, written after release 13 was final: release 12's final scanner (d7ae0bd), then
          # release 13's, the same day
          "heldout113.jsonl": "86.7% / 2.7%; release 13's: 88.0% / 2.7%", "heldout114.jsonl": "91.3% / 2.7%; release 13's: 90.0% / 0.7%",
          "heldout115.jsonl": "92.7% / 2.0%; release 13's: 93.3% / 1.3%", "heldout116.jsonl": "87.3% / 2.0%; release 13's: 88.0% / 2.0%",
          "heldout117.jsonl": "86.7% / 4.0%; release 13's: 87.3% / 3.3%", "heldout118.jsonl": "85.3% / 2.0%; release 13's: 86.7% / 2.0%",
          "heldout119.jsonl": "80.0% / 2.7%; release 13's: 84.0% / 2.0%", "heldout120.jsonl": "92.7% / 2.7%; release 13's: 95.3% / 2.7%",
          # heldout121-128, written before any change of release 14 and measured only after it was final:
          # release 13's final scanner (64aae4f), then release 14's, the same day
          "heldout121.jsonl": "88.0% / 2.0%; release 14's: 92.0% / 2.0%", "heldout122.jsonl": "84.7% / 0.0%; release 14's: 86.7% / 2.0%",
          "heldout123.jsonl": "76.7% / 3.3%; release 14's: 82.7% / 3.3%", "heldout124.jsonl": "58.0% / 1.3%; release 14's: 69.3% / 2.0%",
          "heldout125.jsonl": "92.7% / 0.7%; release 14's: 92.7% / 1.3%", "heldout126.jsonl": "82.7% / 1.3%; release 14's: 84.7% / 1.3%",
          "heldout127.jsonl": "95.3% / 2.0%; release 14's: 96.0% / 2.0%", "heldout128.jsonl": "81.3% / 2.7%; release 14's: 84.0% / 2.7%",
          # heldout129-136, written after release 14 was final: release 13's final scanner, then release 14's
          "heldout129.jsonl": "88.7% / 4.0%; release 14's: 92.0% / 3.3%", "heldout130.jsonl": "89.3% / 3.3%; release 14's: 92.0% / 3.3%",
          "heldout131.jsonl": "89.3% / 1.3%; release 14's: 94.7% / 1.3%", "heldout132.jsonl": "88.0% / 2.7%; release 14's: 90.7% / 2.7%",
          "heldout133.jsonl": "90.0% / 2.0%; release 14's: 91.3% / 1.3%", "heldout134.jsonl": "81.3% / 2.7%; release 14's: 82.7% / 3.3%",
          "heldout135.jsonl": "90.0% / 2.0%; release 14's: 92.7% / 2.7%", "heldout136.jsonl": "93.3% / 1.3%; release 14's: 94.0% / 1.3%",
          # heldout137-144, written after release 14 was final: release 14's final scanner (0ef3764); the
          # false-alarm round on heldout121-136 that followed gives the same figures
          "heldout137.jsonl": "90.7% / 1.3%", "heldout138.jsonl": "92.7% / 1.3%", "heldout139.jsonl": "94.7% / 2.7%",
          "heldout140.jsonl": "93.3% / 2.7%", "heldout141.jsonl": "87.3% / 0.7%", "heldout142.jsonl": "92.7% / 2.0%",
          "heldout143.jsonl": "90.7% / 1.3%", "heldout144.jsonl": "88.0% / 3.3%",
          # heldout145-152, written after the false-alarm round: the final scanner (release 14 as committed,
          # in brackets where it differs)
          "heldout145.jsonl": "94.7% / 5.3%", "heldout146.jsonl": "96.7% / 0.7% (1.3%)", "heldout147.jsonl": "91.3% / 2.7%",
          "heldout148.jsonl": "91.3% / 2.0% (2.7%)", "heldout149.jsonl": "80.7% / 0.7%", "heldout150.jsonl": "90.7% / 0.7%",
          "heldout151.jsonl": "78.7% / 4.0%", "heldout152.jsonl": "86.7% / 2.0%",
          # heldout153-160, written before any change of release 15: release 14's final scanner (c6754ae),
          # then release 15's before its false-alarm rounds
          "heldout153.jsonl": "84.7% / 2.7%; release 15's: 93.3% / 1.3%", "heldout154.jsonl": "92.7% / 0.7%; release 15's: 95.3% / 0.7%",
          "heldout155.jsonl": "88.7% / 3.3%; release 15's: 92.7% / 4.7%", "heldout156.jsonl": "91.3% / 6.0%; release 15's: 93.3% / 6.7%",
          "heldout157.jsonl": "88.7% / 2.0%; release 15's: 90.0% / 2.0%", "heldout158.jsonl": "70.7% / 0.0%; release 15's: 77.3% / 0.0%",
          "heldout159.jsonl": "80.0% / 5.3%; release 15's: 89.3% / 5.3%", "heldout160.jsonl": "86.7% / 2.7%; release 15's: 91.3% / 2.0%",
          # heldout161-168, written while release 15's model trained: release 14's final scanner, then
          # release 15's before the false-alarm round on their own false alarms
          "heldout161.jsonl": "88.0% / 2.0%; release 15's: 91.3% / 2.0%", "heldout162.jsonl": "88.0% / 2.7%; release 15's: 90.7% / 2.7%",
          "heldout163.jsonl": "90.0% / 3.3%; release 15's: 90.0% / 3.3%", "heldout164.jsonl": "91.3% / 2.7%; release 15's: 91.3% / 2.7%",
          "heldout165.jsonl": "86.7% / 2.7%; release 15's: 88.0% / 2.7%", "heldout166.jsonl": "89.3% / 1.3%; release 15's: 92.0% / 1.3%",
          "heldout167.jsonl": "89.3% / 4.0%; release 15's: 92.0% / 4.0%", "heldout168.jsonl": "78.7% / 2.7%; release 15's: 82.0% / 2.7%",
          # heldout169-176, written during the false-alarm rounds: release 14's and release 15's final scanners
          "heldout169.jsonl": "84.7% / 2.0%; release 15's: 91.3% / 1.3%", "heldout170.jsonl": "89.3% / 1.3%; release 15's: 92.7% / 1.3%",
          "heldout171.jsonl": "93.3% / 3.3%; release 15's: 94.7% / 3.3%", "heldout172.jsonl": "90.0% / 1.3%; release 15's: 90.7% / 1.3%",
          "heldout173.jsonl": "82.7% / 2.7%; release 15's: 88.0% / 2.7%", "heldout174.jsonl": "82.0% / 2.7%; release 15's: 86.0% / 2.7%",
          "heldout175.jsonl": "90.7% / 4.0%; release 15's: 92.0% / 4.0%", "heldout176.jsonl": "88.7% / 1.3%; release 15's: 90.7% / 1.3%",
          # heldout177-184, written after release 15 was committed: release 14's and release 15's final scanners
          "heldout177.jsonl": "90.7% / 3.3%; release 15's: 93.3% / 2.7%", "heldout178.jsonl": "89.3% / 3.3%; release 15's: 89.3% / 2.7%",
          "heldout179.jsonl": "81.3% / 1.3%; release 15's: 81.3% / 1.3%", "heldout180.jsonl": "90.7% / 0.7%; release 15's: 92.7% / 0.0%",
          "heldout181.jsonl": "87.3% / 0.7%; release 15's: 92.0% / 0.7%", "heldout182.jsonl": "87.3% / 4.0%; release 15's: 88.0% / 4.0%",
          "heldout183.jsonl": "90.0% / 0.0%; release 15's: 89.3% / 0.7%", "heldout184.jsonl": "90.7% / 3.3%; release 15's: 92.7% / 1.3%",
          # heldout185-192, written after that: release 14's and release 15's final scanners
          "heldout185.jsonl": "86.7% / 2.7%; release 15's: 86.7% / 2.7%", "heldout186.jsonl": "95.3% / 2.0%; release 15's: 96.0% / 2.0%",
          "heldout187.jsonl": "88.0% / 4.0%; release 15's: 91.3% / 4.7%", "heldout188.jsonl": "86.0% / 3.3%; release 15's: 87.3% / 2.7%",
          "heldout189.jsonl": "85.3% / 4.0%; release 15's: 92.0% / 3.3%", "heldout190.jsonl": "84.0% / 4.0%; release 15's: 85.3% / 4.0%",
          "heldout191.jsonl": "85.3% / 4.0%; release 15's: 89.3% / 4.0%", "heldout192.jsonl": "81.3% / 3.3%; release 15's: 83.3% / 2.7%",
          # heldout193-200, written before any change of release 16, and heldout201-208, written while its
          # model trained: release 15's final scanner (42dcc25), then release 16's
          "heldout193.jsonl": "90.7% / 3.3%; release 16's: 92.0% / 2.0%", "heldout194.jsonl": "73.3% / 3.3%; release 16's: 81.3% / 4.7%",
          "heldout195.jsonl": "87.3% / 2.0%; release 16's: 93.3% / 1.3%", "heldout196.jsonl": "83.3% / 1.3%; release 16's: 89.3% / 1.3%",
          "heldout197.jsonl": "71.3% / 2.0%; release 16's: 73.3% / 1.3%", "heldout198.jsonl": "91.3% / 2.7%; release 16's: 92.7% / 2.7%",
          "heldout199.jsonl": "90.0% / 0.7%; release 16's: 93.3% / 0.7%", "heldout200.jsonl": "85.3% / 2.0%; release 16's: 88.0% / 2.0%",
          "heldout201.jsonl": "96.0% / 4.7%; release 16's: 96.7% / 4.7%", "heldout202.jsonl": "93.3% / 0.7%; release 16's: 93.3% / 0.7%",
          "heldout203.jsonl": "95.3% / 1.3%; release 16's: 97.3% / 2.0%", "heldout204.jsonl": "96.7% / 0.0%; release 16's: 96.0% / 0.7%",
          "heldout205.jsonl": "92.7% / 2.0%; release 16's: 92.7% / 2.0%", "heldout206.jsonl": "97.3% / 0.7%; release 16's: 96.7% / 1.3%",
          "heldout207.jsonl": "96.7% / 2.0%; release 16's: 96.0% / 2.0%", "heldout208.jsonl": "96.7% / 1.3%; release 16's: 98.7% / 1.3%",
          # heldout209-216, written after release 16 was final: release 15's and release 16's final scanners
          "heldout209.jsonl": "91.3% / 2.7%; release 16's: 94.0% / 2.0%", "heldout210.jsonl": "94.7% / 1.3%; release 16's: 95.3% / 1.3%",
          "heldout211.jsonl": "92.7% / 2.7%; release 16's: 93.3% / 2.0%", "heldout212.jsonl": "94.7% / 2.0%; release 16's: 94.7% / 1.3%",
          "heldout213.jsonl": "86.0% / 1.3%; release 16's: 90.7% / 2.0%", "heldout214.jsonl": "95.3% / 2.0%; release 16's: 97.3% / 2.0%",
          "heldout215.jsonl": "95.3% / 6.7%; release 16's: 96.7% / 6.0%", "heldout216.jsonl": "90.7% / 2.0%; release 16's: 92.0% / 2.0%",
          # heldout217-224, written after heldout209-216 was measured: release 15's and release 16's final
          # scanners (release 16 with the link fix, ea70df8)
          "heldout217.jsonl": "87.3% / 0.7%; release 16's: 92.0% / 0.7%", "heldout218.jsonl": "90.7% / 2.0%; release 16's: 90.0% / 2.0%",
          "heldout219.jsonl": "93.3% / 2.7%; release 16's: 94.0% / 1.3%", "heldout220.jsonl": "94.7% / 2.0%; release 16's: 96.7% / 1.3%",
          "heldout221.jsonl": "94.7% / 4.7%; release 16's: 96.0% / 3.3%", "heldout222.jsonl": "95.3% / 2.7%; release 16's: 95.3% / 3.3%",
          "heldout223.jsonl": "84.0% / 2.7%; release 16's: 91.3% / 2.7%", "heldout224.jsonl": "89.3% / 4.7%; release 16's: 91.3% / 4.7%",
          # heldout225-232, written before any change of release 17, and heldout233-240, written before its
          # model trained: release 16's final scanner (719b92a), then release 17's
          "heldout225.jsonl": "96.0% / 0.0%; release 17's: 98.0% / 0.7%", "heldout226.jsonl": "93.3% / 2.7%; release 17's: 95.3% / 2.7%",
          "heldout227.jsonl": "93.3% / 1.3%; release 17's: 93.3% / 1.3%", "heldout228.jsonl": "94.0% / 1.3%; release 17's: 94.0% / 0.7%",
          "heldout229.jsonl": "93.3% / 1.3%; release 17's: 96.7% / 1.3%", "heldout230.jsonl": "92.0% / 2.7%; release 17's: 92.7% / 2.7%",
          "heldout231.jsonl": "91.3% / 2.7%; release 17's: 93.3% / 2.7%", "heldout232.jsonl": "93.3% / 3.3%; release 17's: 96.0% / 2.7%",
          "heldout233.jsonl": "96.0% / 4.7%; release 17's: 96.7% / 4.0%", "heldout234.jsonl": "93.3% / 2.0%; release 17's: 94.7% / 2.0%",
          "heldout235.jsonl": "92.7% / 1.3%; release 17's: 92.0% / 0.7%", "heldout236.jsonl": "90.0% / 3.3%; release 17's: 94.7% / 2.7%",
          "heldout237.jsonl": "86.7% / 0.0%; release 17's: 88.7% / 0.0%", "heldout238.jsonl": "96.0% / 0.7%; release 17's: 96.7% / 0.7%",
          "heldout239.jsonl": "90.7% / 1.3%; release 17's: 93.3% / 1.3%", "heldout240.jsonl": "94.0% / 2.7%; release 17's: 94.7% / 2.7%",
          # heldout241-248, written after release 17 was committed: release 16's and release 17's final scanners
          "heldout241.jsonl": "91.3% / 2.7%; release 17's: 90.7% / 2.7%", "heldout242.jsonl": "94.7% / 1.3%; release 17's: 95.3% / 1.3%",
          "heldout243.jsonl": "90.7% / 2.7%; release 17's: 92.7% / 2.0%", "heldout244.jsonl": "95.3% / 0.7%; release 17's: 95.3% / 0.7%",
          "heldout245.jsonl": "92.7% / 1.3%; release 17's: 94.0% / 1.3%", "heldout246.jsonl": "89.3% / 0.7%; release 17's: 92.0% / 0.7%",
          "heldout247.jsonl": "96.0% / 2.7%; release 17's: 96.7% / 0.0%", "heldout248.jsonl": "94.0% / 2.0%; release 17's: 96.0% / 2.0%",
          # heldout249-256 and 257-264, written after release 17 was committed: release 17 (1cfac62), once each
          "heldout249.jsonl": "94.0% / 1.3%", "heldout250.jsonl": "93.3% / 4.7%", "heldout251.jsonl": "94.7% / 3.3%",
          "heldout252.jsonl": "92.7% / 2.0%", "heldout253.jsonl": "92.7% / 2.7%", "heldout254.jsonl": "96.0% / 2.0%",
          "heldout255.jsonl": "95.3% / 4.0%", "heldout256.jsonl": "93.3% / 3.3%", "heldout257.jsonl": "95.3% / 6.0%",
          "heldout258.jsonl": "94.0% / 0.7%", "heldout259.jsonl": "96.0% / 2.7%", "heldout260.jsonl": "98.0% / 1.3%",
          "heldout261.jsonl": "93.3% / 1.3%", "heldout262.jsonl": "90.0% / 0.7%", "heldout263.jsonl": "91.3% / 0.0%",
          "heldout264.jsonl": "89.3% / 5.3%",
          # heldout265-272, written after heldout257-264 were measured: release 17 (1cfac62) and with the Japanese cue, the same;
          # then release 18's, whose threshold was chosen on them
          "heldout265.jsonl": "88.7% / 3.3%; release 18's: 86.0% / 2.7%", "heldout266.jsonl": "92.7% / 2.7%; release 18's: 91.3% / 2.7%",
          "heldout267.jsonl": "93.3% / 2.7%; release 18's: 94.0% / 2.7%", "heldout268.jsonl": "94.0% / 1.3%; release 18's: 92.7% / 0.7%",
          "heldout269.jsonl": "88.0% / 1.3%; release 18's: 88.7% / 0.7%", "heldout270.jsonl": "92.7% / 1.3%; release 18's: 88.7% / 0.7%",
          "heldout271.jsonl": "91.3% / 1.3%; release 18's: 90.7% / 0.7%", "heldout272.jsonl": "93.3% / 4.7%; release 18's: 92.0% / 3.3%",
          # heldout273-280 and 281-288, written before release 18's model finished training: release 17 (3d98461), then release 18
          "heldout273.jsonl": "87.3% / 2.0%; release 18's: 87.3% / 2.0%", "heldout274.jsonl": "98.0% / 2.7%; release 18's: 94.7% / 2.7%",
          "heldout275.jsonl": "93.3% / 2.0%; release 18's: 95.3% / 2.0%", "heldout276.jsonl": "93.3% / 3.3%; release 18's: 91.3% / 2.0%",
          "heldout277.jsonl": "92.7% / 2.0%; release 18's: 92.7% / 2.0%", "heldout278.jsonl": "92.7% / 2.7%; release 18's: 92.0% / 2.0%",
          "heldout279.jsonl": "95.3% / 2.0%; release 18's: 95.3% / 2.0%", "heldout280.jsonl": "93.3% / 2.0%; release 18's: 92.0% / 2.0%",
          "heldout281.jsonl": "93.3% / 0.7%; release 18's: 90.7% / 0.7%", "heldout282.jsonl": "95.3% / 1.3%; release 18's: 94.7% / 1.3%",
          "heldout283.jsonl": "89.3% / 2.0%; release 18's: 90.7% / 2.0%", "heldout284.jsonl": "95.3% / 1.3%; release 18's: 93.3% / 1.3%",
          "heldout285.jsonl": "90.0% / 3.3%; release 18's: 88.0% / 2.0%", "heldout286.jsonl": "94.0% / 2.0%; release 18's: 93.3% / 1.3%",
          "heldout287.jsonl": "88.7% / 2.7%; release 18's: 89.3% / 2.7%", "heldout288.jsonl": "94.7% / 4.7%; release 18's: 92.7% / 4.0%",
          # heldout289-296, written after release 18 was committed: release 18 (7970c31; its rule round on heldout273-288
          # changed none of them), and release 17 (3d98461) for comparison
          "heldout289.jsonl": "93.3% / 2.7%; release 17's: 94.0% / 2.7%", "heldout290.jsonl": "92.0% / 2.7%; release 17's: 93.3% / 2.7%",
          "heldout291.jsonl": "92.7% / 2.0%; release 17's: 93.3% / 2.7%", "heldout292.jsonl": "95.3% / 4.0%; release 17's: 94.7% / 4.7%",
          "heldout293.jsonl": "88.7% / 0.7%; release 17's: 88.7% / 1.3%", "heldout294.jsonl": "94.0% / 0.0%; release 17's: 94.0% / 0.0%",
          "heldout295.jsonl": "93.3% / 0.7%; release 17's: 94.7% / 2.0%", "heldout296.jsonl": "96.7% / 4.0%; release 17's: 95.3% / 5.3%",
          # heldout297-304 (written at the end of release 18's session) and 305-320 (written while release 19's model
          # trained): release 18 as committed (464c109), then release 19
          "heldout297.jsonl": "82.7% / 0.7%; release 19's: 85.3% / 1.3%", "heldout298.jsonl": "94.0% / 0.7%; release 19's: 95.3% / 0.7%",
          "heldout299.jsonl": "92.0% / 0.7%; release 19's: 92.7% / 0.7%", "heldout300.jsonl": "96.7% / 4.7%; release 19's: 96.7% / 4.7%",
          "heldout301.jsonl": "92.0% / 2.7%; release 19's: 92.7% / 2.0%", "heldout302.jsonl": "88.7% / 2.7%; release 19's: 91.3% / 4.0%",
          "heldout303.jsonl": "93.3% / 0.7%; release 19's: 94.7% / 0.7%", "heldout304.jsonl": "90.0% / 2.7%; release 19's: 92.7% / 2.7%",
          "heldout305.jsonl": "90.7% / 2.7%; release 19's: 92.0% / 2.7%", "heldout306.jsonl": "96.7% / 2.0%; release 19's: 96.7% / 2.0%",
          "heldout307.jsonl": "90.7% / 2.7%; release 19's: 93.3% / 2.7%", "heldout308.jsonl": "92.7% / 2.7%; release 19's: 94.0% / 2.7%",
          "heldout309.jsonl": "88.0% / 1.3%; release 19's: 91.3% / 1.3%", "heldout310.jsonl": "92.7% / 2.0%; release 19's: 92.7% / 2.0%",
          "heldout311.jsonl": "90.0% / 2.0%; release 19's: 92.0% / 2.0%", "heldout312.jsonl": "94.7% / 4.0%; release 19's: 95.3% / 2.7%",
          "heldout313.jsonl": "89.3% / 1.3%; release 19's: 92.7% / 1.3%", "heldout314.jsonl": "95.3% / 2.7%; release 19's: 95.3% / 2.0%",
          "heldout315.jsonl": "89.3% / 0.7%; release 19's: 92.7% / 0.7%", "heldout316.jsonl": "94.7% / 1.3%; release 19's: 95.3% / 1.3%",
          "heldout317.jsonl": "82.7% / 1.3%; release 19's: 84.0% / 1.3%", "heldout318.jsonl": "92.0% / 2.0%; release 19's: 92.7% / 2.0%",
          "heldout319.jsonl": "93.3% / 2.0%; release 19's: 95.3% / 2.0%", "heldout320.jsonl": "94.0% / 3.3%; release 19's: 96.0% / 3.3%",
          # heldout321-328, written after release 19's threshold was revised: release 18 (464c109), then release 19
          "heldout321.jsonl": "94.0% / 0.7%; release 19's: 95.3% / 0.0%", "heldout322.jsonl": "95.3% / 2.7%; release 19's: 95.3% / 2.0%",
          "heldout323.jsonl": "90.0% / 1.3%; release 19's: 91.3% / 2.0%", "heldout324.jsonl": "95.3% / 0.0%; release 19's: 96.0% / 0.0%",
          "heldout325.jsonl": "94.0% / 4.0%; release 19's: 96.0% / 3.3%", "heldout326.jsonl": "91.3% / 4.0%; release 19's: 93.3% / 3.3%",
          "heldout327.jsonl": "89.3% / 0.0%; release 19's: 92.0% / 0.0%", "heldout328.jsonl": "94.7% / 0.0%; release 19's: 95.3% / 0.0%",
          # heldout329-336, written at the start of release 20's round: release 19 (428ec4d)
          "heldout329.jsonl": "94.0% / 3.3%", "heldout330.jsonl": "91.3% / 4.7%",
          "heldout331.jsonl": "92.7% / 3.3%", "heldout332.jsonl": "92.0% / 2.0%",
          "heldout333.jsonl": "92.0% / 5.3%", "heldout334.jsonl": "91.3% / 4.0%",
          "heldout335.jsonl": "94.0% / 1.3%", "heldout336.jsonl": "93.3% / 3.3%",
          # heldout337-344, written in the same minutes, measured after the round's last change: release 19 (428ec4d)
          "heldout337.jsonl": "92.7% / 3.3%", "heldout338.jsonl": "93.3% / 3.3%",
          "heldout339.jsonl": "96.7% / 6.0%", "heldout340.jsonl": "92.7% / 2.0%",
          "heldout341.jsonl": "94.7% / 1.3%", "heldout342.jsonl": "90.7% / 4.0%",
          "heldout343.jsonl": "87.3% / 4.7%", "heldout344.jsonl": "92.0% / 6.0%",
          # heldout345-352, written for release 20's comparison: release 19's model with 3e2bc38's rules
          "heldout345.jsonl": "94.0% / 2.0%", "heldout346.jsonl": "92.0% / 0.7%",
          "heldout347.jsonl": "94.0% / 2.0%", "heldout348.jsonl": "94.7% / 2.7%",
          "heldout349.jsonl": "90.7% / 2.0%", "heldout350.jsonl": "91.3% / 3.3%",
          "heldout351.jsonl": "92.0% / 2.0%", "heldout352.jsonl": "92.7% / 4.0%",
          # heldout353-360, written during the round on heldout345-352, measured after its last change (3297fc8)
          "heldout353.jsonl": "91.3% / 1.3%", "heldout354.jsonl": "94.7% / 3.3%",
          "heldout355.jsonl": "94.0% / 3.3%", "heldout356.jsonl": "88.0% / 2.7%",
          "heldout357.jsonl": "90.7% / 5.3%", "heldout358.jsonl": "93.3% / 2.7%",
          "heldout359.jsonl": "88.7% / 1.3%", "heldout360.jsonl": "93.3% / 4.0%",
          # heldout361-368, commissioned at the start of the 2026-12-02 third session: release 19 with c818268's rules
          "heldout361.jsonl": "86.7% / 2.7%", "heldout362.jsonl": "92.7% / 4.7%",
          "heldout363.jsonl": "94.0% / 2.7%", "heldout364.jsonl": "93.3% / 4.0%",
          "heldout365.jsonl": "92.7% / 2.7%", "heldout366.jsonl": "87.3% / 2.7%",
          "heldout367.jsonl": "87.3% / 2.7%", "heldout368.jsonl": "90.7% / 4.0%",
          # heldout369-376, commissioned at the start of the 2026-12-02 fourth session: release 19 with 70175a4's rules
          "heldout369.jsonl": "92.7% / 4.0%", "heldout370.jsonl": "87.3% / 4.7%",
          "heldout371.jsonl": "91.3% / 1.3%", "heldout372.jsonl": "92.7% / 2.0%",
          "heldout373.jsonl": "90.0% / 4.0%", "heldout374.jsonl": "90.7% / 2.0%",
          "heldout375.jsonl": "90.7% / 2.0%", "heldout376.jsonl": "91.3% / 3.3%",
          # heldout377-384, commissioned mid-session: release 19 with 0cf7d16's rules (70175a4's: 90.4% / 3.25%)
          "heldout377.jsonl": "85.3% / 2.7%", "heldout378.jsonl": "96.7% / 2.7%",
          "heldout379.jsonl": "85.3% / 3.3%", "heldout380.jsonl": "92.0% / 5.3%",
          "heldout381.jsonl": "93.3% / 2.7%", "heldout382.jsonl": "87.3% / 2.0%",
          "heldout383.jsonl": "89.3% / 4.0%", "heldout384.jsonl": "94.7% / 2.7%",
          # heldout385-392, commissioned late in the session: release 19 with 384fb10's rules (70175a4's: 90.5% / 2.75%)
          "heldout385.jsonl": "90.0% / 2.7%", "heldout386.jsonl": "93.3% / 2.7%",
          "heldout387.jsonl": "92.0% / 2.0%", "heldout388.jsonl": "86.7% / 3.3%",
          "heldout389.jsonl": "90.0% / 2.0%", "heldout390.jsonl": "90.7% / 2.7%",
          "heldout391.jsonl": "95.3% / 2.7%", "heldout392.jsonl": "88.7% / 4.0%",
          # heldout393-400, commissioned at the start of the 2026-12-02 fifth session: release 19 with 9c2bbb3's rules
          "heldout393.jsonl": "92.7% / 2.7%", "heldout394.jsonl": "94.7% / 2.7%",
          "heldout395.jsonl": "98.0% / 4.0%", "heldout396.jsonl": "88.0% / 2.0%",
          "heldout397.jsonl": "92.0% / 5.3%", "heldout398.jsonl": "90.7% / 4.0%",
          "heldout399.jsonl": "88.0% / 2.7%", "heldout400.jsonl": "93.3% / 2.0%",
          # heldout401-408, commissioned mid-session: release 19 with 317ff07's rules (9c2bbb3's: 91.4% / 3.08%)
          "heldout401.jsonl": "92.7% / 3.3%", "heldout402.jsonl": "94.0% / 2.7%",
          "heldout403.jsonl": "92.7% / 3.3%", "heldout404.jsonl": "89.3% / 2.0%",
          "heldout405.jsonl": "89.3% / 2.7%", "heldout406.jsonl": "92.0% / 2.7%",
          "heldout407.jsonl": "87.3% / 1.3%", "heldout408.jsonl": "94.7% / 5.3%",
          # heldout409-416, commissioned late in the session: release 19 with 9e5bffa's rules (9c2bbb3's: 93.2% / 2.58%)
          "heldout409.jsonl": "92.7% / 2.0%", "heldout410.jsonl": "94.7% / 1.3%",
          "heldout411.jsonl": "92.7% / 1.3%", "heldout412.jsonl": "96.0% / 2.7%",
          "heldout413.jsonl": "91.3% / 2.0%", "heldout414.jsonl": "92.7% / 2.0%",
          "heldout415.jsonl": "94.0% / 4.7%", "heldout416.jsonl": "91.3% / 3.3%",
          # heldout417-424, commissioned after release 21 was committed: release 21 with 7a964af's rules (release 19: 91.7% / 2.08%)
          "heldout417.jsonl": "95.3% / 2.0%", "heldout418.jsonl": "91.3% / 1.3%",
          "heldout419.jsonl": "93.3% / 1.3%", "heldout420.jsonl": "94.0% / 0.0%",
          "heldout421.jsonl": "94.0% / 1.3%", "heldout422.jsonl": "92.0% / 1.3%",
          "heldout423.jsonl": "92.7% / 4.0%", "heldout424.jsonl": "96.0% / 2.0%",
          # heldout425-440, written 2026-12-03 to a reconstructed brief (languages incl. he, el, uk, vi, ro, sv, hi), measured once with 3e51bc8 (release 21)
          "heldout425.jsonl": "86.0% / 4.0%", "heldout426.jsonl": "82.0% / 3.3%",
          "heldout427.jsonl": "91.3% / 0.7%", "heldout428.jsonl": "84.7% / 1.3%",
          "heldout429.jsonl": "90.7% / 2.0%", "heldout430.jsonl": "85.3% / 2.0%",
          "heldout431.jsonl": "88.0% / 2.7%", "heldout432.jsonl": "78.7% / 0.7%",
          "heldout433.jsonl": "94.0% / 2.7%", "heldout434.jsonl": "81.3% / 1.3%",
          "heldout435.jsonl": "88.7% / 1.3%", "heldout436.jsonl": "76.0% / 1.3%",
          "heldout437.jsonl": "87.3% / 2.0%", "heldout438.jsonl": "82.7% / 2.0%",
          "heldout439.jsonl": "91.3% / 4.7%", "heldout440.jsonl": "84.7% / 1.3%",
          # heldout441-448, written 2026-12-03 during round 32 and measured once as release 22's test: release 22 with
          # round 32's rules (release 21 with them: 89.3% / 1.67% pooled; 3e51bc8, before the round: 88.8% / 2.08%)
          "heldout441.jsonl": "89.3% / 1.3%", "heldout442.jsonl": "90.0% / 4.0%",
          "heldout443.jsonl": "94.0% / 0.7%", "heldout444.jsonl": "92.7% / 1.3%",
          "heldout445.jsonl": "89.3% / 2.7%", "heldout446.jsonl": "86.0% / 1.3%",
          "heldout447.jsonl": "90.7% / 0.0%", "heldout448.jsonl": "90.7% / 2.0%",
          # heldout449-456, written while release 22 was tested, measured once with it (3e51bc8: 92.0% / 1.67% pooled)
          "heldout449.jsonl": "96.0% / 0.0%", "heldout450.jsonl": "95.3% / 1.3%",
          "heldout451.jsonl": "89.3% / 0.7%", "heldout452.jsonl": "96.7% / 2.0%",
          "heldout453.jsonl": "93.3% / 2.7%", "heldout454.jsonl": "94.7% / 2.7%",
          "heldout455.jsonl": "96.0% / 1.3%", "heldout456.jsonl": "93.3% / 2.0%",
          # heldout457-464, written during round 33, measured once with release 22 and round 33's rules (c7a0e5d)
          "heldout457.jsonl": "93.3% / 1.3%", "heldout458.jsonl": "94.0% / 4.0%",
          "heldout459.jsonl": "85.3% / 1.3%", "heldout460.jsonl": "92.7% / 2.0%",
          "heldout461.jsonl": "93.3% / 1.3%", "heldout462.jsonl": "86.7% / 2.7%",
          "heldout463.jsonl": "94.7% / 3.3%", "heldout464.jsonl": "91.3% / 0.7%",
          # the training sets, each measured once before it joined the training data (extra_a and b were not)
          "extra_c.jsonl": "46.2% / 2.9%", "extra_d.jsonl": "49.5% / 2.9%", "extra_e.jsonl": "49.5% / 14.8%",
          "extra_f.jsonl": "45.7% / 0.0%", "extra_g.jsonl": "79.4% / 27.2%", "extra_h.jsonl": "77.1% / 10.5%",
          "extra_i.jsonl": "46.7% / 14.3%", "extra_j.jsonl": "81.9% / 12.4%", "extra_k.jsonl": "59.0% / 8.1%",
          "extra_l.jsonl": "91.0% / 25.7%", "extra_m.jsonl": "87.6% / 12.9%", "extra_n.jsonl": "88.1% / 17.6%",
          "extra_o.jsonl": "91.0% / 4.3%", "extra_p.jsonl": "83.8% / 4.3%",
          # release 8's model (s-x with the score floor of release 9's first commit)
          "extra_q.jsonl": "81.4% / 3.3%", "extra_r.jsonl": "80.0% / 8.1%", "extra_s.jsonl": "67.6% / 3.8%",
          "extra_t.jsonl": "83.8% / 5.2%", "extra_u.jsonl": "89.0% / 7.6%", "extra_v.jsonl": "88.1% / 12.4%",
          "extra_w.jsonl": "71.4% / 3.3%", "extra_x.jsonl": "81.9% / 6.7%",
          # release 9's final scanner
          "extra_y.jsonl": "79.0% / 3.8%", "extra_z.jsonl": "68.1% / 4.8%",
          # release 10's (a385f00)
          "extra_za.jsonl": "60.0% / 1.4%", "extra_zb.jsonl": "58.1% / 1.4%", "extra_zc.jsonl": "59.5% / 3.8%",
          "extra_zd.jsonl": "68.6% / 5.2%", "extra_ze.jsonl": "55.2% / 0.5%", "extra_zf.jsonl": "70.0% / 2.4%",
          # release 10's rules and model with release 11's wider veto
          "extra_zg.jsonl": "81.9% / 7.6%", "extra_zh.jsonl": "82.9% / 3.8%",
          # release 11's final scanner (d913fd7)
          "extra_zi.jsonl": "80.5% / 15.2%", "extra_zj.jsonl": "78.6% / 3.8%", "extra_zk.jsonl": "84.3% / 3.3%",
          "extra_zl.jsonl": "88.6% / 3.8%", "extra_zm.jsonl": "83.8% / 2.9%", "extra_zn.jsonl": "87.6% / 2.9%",
          "extra_zo.jsonl": "81.0% / 6.2%", "extra_zp.jsonl": "91.0% / 3.3%", "extra_zq.jsonl": "83.8% / 5.7%",
          "extra_zr.jsonl": "84.8% / 1.0%",
          # release 12's final scanner (d7ae0bd)
          "extra_zs.jsonl": "52.9% / 1.4%", "extra_zt.jsonl": "61.0% / 2.4%", "extra_zu.jsonl": "69.0% / 2.4%",
          "extra_zv.jsonl": "58.6% / 2.4%", "extra_zw.jsonl": "69.5% / 3.3%", "extra_zx.jsonl": "81.0% / 0.0%",
          "extra_zy.jsonl": "71.0% / 3.3%", "extra_zz.jsonl": "82.4% / 1.9%",
          # release 13's final scanner (64aae4f)
          "extra_zza.jsonl": "49.0% / 1.4%", "extra_zzb.jsonl": "64.8% / 3.8%", "extra_zzc.jsonl": "59.5% / 2.4%",
          "extra_zzd.jsonl": "85.7% / 1.0%", "extra_zze.jsonl": "84.8% / 4.8%", "extra_zzf.jsonl": "82.9% / 2.4%",
          "extra_zzg.jsonl": "62.9% / 2.4%", "extra_zzh.jsonl": "75.2% / 1.4%",
          # release 15's rule round with release 14's model
          "extra_zzi.jsonl": "58.1% / 2.4%", "extra_zzj.jsonl": "67.6% / 1.0%", "extra_zzk.jsonl": "75.7% / 1.4%",
          "extra_zzl.jsonl": "87.6% / 3.3%", "extra_zzm.jsonl": "89.0% / 3.8%",
          # release 15's final scanner (42dcc25)
          "extra_zzn.jsonl": "74.3% / 4.3%", "extra_zzo.jsonl": "76.7% / 1.9%", "extra_zzp.jsonl": "79.5% / 2.4%",
          "extra_zzq.jsonl": "44.3% / 1.4%", "extra_zzr.jsonl": "59.5% / 1.4%", "extra_zzs.jsonl": "67.6% / 1.0%",
          "extra_zzt.jsonl": "71.9% / 2.9%", "extra_zzu.jsonl": "88.6% / 5.7%",
          # release 16's final scanner (719b92a)
          "extra_zzv.jsonl": "70.0% / 5.7%", "extra_zzw.jsonl": "67.1% / 0.5%", "extra_zzx.jsonl": "85.2% / 1.9%",
          "extra_zzy.jsonl": "93.3% / 11.0%", "extra_zzz.jsonl": "85.7% / 4.3%", "extra_zzza.jsonl": "92.4% / 3.8%",
          # release 17 with the Japanese quote verbs (1473350); no shipped model is trained on these yet
          "extra_zzzb.jsonl": "86.2% / 9.0%", "extra_zzzc.jsonl": "73.8% / 1.4%", "extra_zzzd.jsonl": "80.5% / 1.9%",
          "extra_zzze.jsonl": "93.3% / 9.0%", "extra_zzzf.jsonl": "84.8% / 8.1%", "extra_zzzg.jsonl": "84.8% / 8.6%",
          # measured with release 18's final scanner
          "extra_zzzh.jsonl": "82.9% / 4.8%", "extra_zzzi.jsonl": "74.3% / 1.4%", "extra_zzzj.jsonl": "82.4% / 2.4%",
          "extra_zzzk.jsonl": "84.8% / 6.7%", "extra_zzzl.jsonl": "87.6% / 3.3%", "extra_zzzm.jsonl": "83.8% / 1.4%",
          # measured with release 19's final scanner
          "extra_zzzn.jsonl": "77.6% / 5.2%", "extra_zzzo.jsonl": "87.6% / 12.4%", "extra_zzzp.jsonl": "80.0% / 2.4%",
          "extra_zzzq.jsonl": "77.1% / 0.5%",
          # measured with 315402c's scanner (release 19's model)
          "extra_zzzr.jsonl": "91.7% / 2.5%", "extra_zzzs.jsonl": "87.8% / 3.3%", "extra_zzzt.jsonl": "87.2% / 1.2%",
          "extra_zzzu.jsonl": "85.6% / 2.5%"}
TRAIN = ROOT / "bench" / "detector_train.jsonl"
MEMORIES = ROOT / "bench" / "recall_entries.jsonl"  # everyday memory entries (the recall bench's), all benign
BASE_CMD = "import memrepo.model.entry"
SCAN_CMD = "from memrepo.detect import default_scanner; default_scanner().scan_text('User prefers concise responses')"

# The substance of Hermes Agent's memory threat patterns (a plain case-insensitive regex list
# plus invisible characters), rewritten here as the baseline.
HERMES_PATTERNS = [
    r"ignore\s+(previous|all|above|prior)\s+instructions",
    r"you\s+are\s+now\s+",
    r"do\s+not\s+tell\s+the\s+user",
    r"system\s+prompt\s+override",
    r"disregard\s+(your|all|any)\s+(instructions|rules|guidelines)",
    r"act\s+as\s+(if|though)\s+you\s+(have\s+no|don't\s+have)\s+(restrictions|limits|rules)",
    r"curl\s+[^\n]*\$\{?\w*(KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL|API)",
    r"wget\s+[^\n]*\$\{?\w*(KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL|API)",
    r"cat\s+[^\n]*(\.env|credentials|\.netrc|\.pgpass|\.npmrc|\.pypirc)",
    r"authorized_keys",
    r"\$HOME/\.ssh|~/\.ssh",
]
HERMES_INVISIBLE = set("\u200b\u200c\u200d\u2060\ufeff\u202a\u202b\u202c\u202d\u202e")
_HERMES = [re.compile(p, re.IGNORECASE) for p in HERMES_PATTERNS]


def hermes_blocks(text: str) -> bool:
    return any(c in text for c in HERMES_INVISIBLE) or any(rx.search(text) for rx in _HERMES)


def load(path: Path) -> list[dict[str, str]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def entries_1kb(records: list[dict[str, str]], n: int) -> list[str]:
    """n texts of ~1 KB built from the corpus's benign records (the common case on every write).
    The dev corpus's benign texts are near-attacks (memories about curl, tokens, system prompts),
    the scanner's slowest case; MEMORIES gives everyday entries."""
    benign = [r["text"] for r in records if r["label"] == "benign"] or [r["text"] for r in records]
    out = []
    for i in range(n):
        parts, j, size = [], i, 0
        while size < 1024:
            t = benign[j % len(benign)]
            parts.append(t)
            size += len(t.encode()) + 1
            j += 7
        out.append(" ".join(parts).encode()[:1024].decode("utf-8", "ignore"))
    return out


FRESH = [DETECT / f"heldout{n}.jsonl" for n in range(225, 249)]  # held-out sets, for entries of texts used once


def fresh_entries(n: int, benign: bool = False) -> list[str]:
    """n ~1 KB entries of held-out texts, each text used once (``benign``: only the benign ones):
    unlike entries_1kb's, no entry repeats another's texts, so a scan meets new words, word pairs
    and scan plans, as a real write does."""
    records = [json.loads(line) for f in FRESH if f.exists() for line in f.read_text("utf-8").splitlines() if line.strip()]
    texts = [r["text"] for r in records if not benign or r["label"] == "benign"]
    out, parts, size = [], [], 0
    for t in texts:
        parts.append(t)
        size += len(t.encode()) + 1
        if size >= 1024:
            out.append(" ".join(parts).encode()[:1024].decode("utf-8", "ignore"))
            parts, size = [], 0
            if len(out) == n:
                break
    return out


def median_ms(fn: Callable[[str], object], texts: list[str], rounds: int = 3,
              clock: Callable[[], float] = time.thread_time, warm: int = 5) -> float:
    """Median per-call time in ms, after ``warm`` calls; the default clock is this thread's CPU
    time, which other processes on a busy machine do not inflate (pass time.perf_counter for wall time)."""
    for t in texts[:warm]:
        fn(t)
    times = []
    for _ in range(rounds):
        for t in texts:
            start = clock()
            fn(t)
            times.append(clock() - start)
    return statistics.median(times) * 1000


def child_cpu_ms(code: str, runs: int) -> tuple[float, float]:
    """Minimum CPU and wall time (ms) of ``python -c code`` over ``runs`` fresh processes."""
    cpu, wall = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, env=os.environ.copy())
        wall.append((time.perf_counter() - t0) * 1000)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append((after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000)
    return min(cpu), min(wall)


def rates(records: list[dict[str, str]], blocks: Callable[[str], bool]) -> tuple[float, float]:
    attacks = [r for r in records if r["label"] == "attack"]
    benign = [r for r in records if r["label"] == "benign"]
    det = sum(blocks(r["text"]) for r in attacks) / max(1, len(attacks))
    fa = sum(blocks(r["text"]) for r in benign) / max(1, len(benign))
    return det, fa


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--corpus", type=Path, default=DEV if DEV.exists() else OWN)
    parser.add_argument("--entries", type=int, default=200)
    parser.add_argument("--startup-runs", type=int, default=7)
    args = parser.parse_args()

    if args.startup_runs:
        child_cpu_ms(SCAN_CMD, 1)  # warm the rule-spec cache and the bytecode
        base = child_cpu_ms(BASE_CMD, args.startup_runs)
        scan = child_cpu_ms(SCAN_CMD, args.startup_runs)
        print(f"start-up, min of {args.startup_runs} processes:        CPU time    wall time")
        print(f"  import memrepo.model.entry      {base[0]:8.0f} ms  {base[1]:8.0f} ms")
        print(f"  + default_scanner().scan_text() {scan[0]:8.0f} ms  {scan[1]:8.0f} ms")
        print(f"  detector cost                   {scan[0] - base[0]:8.0f} ms  {scan[1] - base[1]:8.0f} ms")

    from memrepo.detect import compiled, default_scanner

    t0 = time.perf_counter()
    scanner = default_scanner()
    build_ms = (time.perf_counter() - t0) * 1000

    def memrepo_blocks(text: str) -> bool:
        return any(f.severity == "error" for f in scanner.scan_text(text))

    records = load(args.corpus)
    texts = entries_1kb(records, args.entries)
    ours = median_ms(scanner.scan_text, texts)
    hermes = median_ms(hermes_blocks, texts)
    ours_wall = median_ms(scanner.scan_text, texts, clock=time.perf_counter)
    hermes_wall = median_ms(hermes_blocks, texts, clock=time.perf_counter)
    memories = entries_1kb([{**r, "label": "benign"} for r in load(MEMORIES)], args.entries) if MEMORIES.exists() else []
    ours_mem = median_ms(scanner.scan_text, memories) if memories else 0.0
    hermes_mem = median_ms(hermes_blocks, memories) if memories else 0.0
    fresh = fresh_entries(args.entries, benign=True)  # after the above: a warm scanner meeting new texts
    ours_fresh = median_ms(scanner.scan_text, fresh, rounds=1, warm=0) if fresh else 0.0
    hermes_fresh = median_ms(hermes_blocks, fresh, rounds=1, warm=0) if fresh else 0.0
    attack_texts = [r["text"] for r in records if r["label"] == "attack"]
    ours_attacks = median_ms(scanner.scan_text, attack_texts) if attack_texts else 0.0

    build = "compiled to C with mypyc (the opt-in build)" if compiled() else "pure Python (the default build)"
    print(f"memrepo's scanner modules: {build}")
    print(f"corpus: {args.corpus} ({len(records)} records); scanner built in {build_ms:.0f} ms (once per process)")
    print(f"median scan time per 1 KB entry ({len(texts)} entries):   CPU time    wall time")
    print(f"  memrepo scanner     {ours:8.3f} ms  {ours_wall:8.3f} ms")
    print(f"  hermes-style regex  {hermes:8.3f} ms  {hermes_wall:8.3f} ms")
    print(f"  ratio               {ours / hermes if hermes else float('inf'):8.1f} x")
    if memories:
        print(f"median CPU time per 1 KB of everyday memory entries ({MEMORIES.name}, {len(memories)} entries):")
        print(f"  memrepo scanner     {ours_mem:8.3f} ms")
        print(f"  hermes-style regex  {hermes_mem:8.3f} ms")
        print(f"  ratio               {ours_mem / hermes_mem if hermes_mem else float('inf'):8.1f} x")
    if fresh:
        print(f"median CPU time per 1 KB entry of held-out benign texts, each scanned once ({len(fresh)} entries: the")
        print("words, word pairs, scan plans and some patterns are new to the process, as on a real write):")
        print(f"  memrepo scanner     {ours_fresh:8.3f} ms")
        print(f"  hermes-style regex  {hermes_fresh:8.3f} ms")
        print(f"  ratio               {ours_fresh / hermes_fresh if hermes_fresh else float('inf'):8.1f} x")
    print(f"median scan time per corpus attack text (short): memrepo {ours_attacks:.3f} ms")
    corpora = (("dev corpus", args.corpus), ("own corpus", OWN),
               *((f"held-out {n} ({status})", DETECT / f"heldout{n}.jsonl") for n, status in HELDOUT.items()),
               *((_extra_name(p.stem), p) for p in EXTRA), ("training corpus", TRAIN))
    for name, path in corpora:
        if not path.exists():
            continue
        recs = load(path)
        d1, f1 = rates(recs, memrepo_blocks)
        d2, f2 = rates(recs, hermes_blocks)
        when_unseen = f"; measured while unseen: {UNSEEN[path.name]}" if path.name in UNSEEN else ""
        print(f"{name} ({path.name}{when_unseen}):   detection   false alarms")
        print(f"  memrepo scanner     {d1:8.1%}   {f1:8.1%}")
        print(f"  hermes-style regex  {d2:8.1%}   {f2:8.1%}")


def _extra_name(stem: str) -> str:
    trained = "not yet trained on" if stem in NOT_YET_TRAINED else "training data"
    return f"training set {stem} ({trained}; rules {'never ' if stem >= 'extra_q' else ''}tuned on it)"


if __name__ == "__main__":
    main()
