"""Text samples for checking the token estimator against real tokenizers (written for tether)."""

from __future__ import annotations

import json

ENGLISH = """\
The migration started on a quiet Tuesday morning, long before anyone on the team had
finished their first coffee. Maria opened the dashboard, checked that the replicas were
healthy, and typed the command that would move eleven years of customer records from the
old cluster to the new one. Nothing happened for a while. Then the progress bar crept
forward, slowly at first and then with growing confidence, as the copy workers found
their rhythm. By lunchtime the team had learned three things: the network between the
two data centres was slower than the vendor had promised, the old schema still carried
columns that nobody could explain, and the monitoring system reported disk usage in a
unit that changed depending on which page you were looking at. None of these problems
was serious on its own. Together they turned a four-hour job into a two-day adventure.
In the retrospective, the engineers agreed that the hardest part had not been technical
at all. It had been deciding, again and again, whether a surprising number was a real
problem or just another quirk of an ageing system. They wrote down what they would do
differently: rehearse the move on a full copy of the data, measure the network before
trusting any estimate, and delete columns that no one can explain before they become
part of a migration plan. The document ended with a short list of thanks and a reminder
that the old cluster would be switched off at the end of the month, whatever happened.
"""

CHINESE = """\
迁移工作在一个安静的周二早晨开始，那时团队里还没有人喝完第一杯咖啡。玛丽亚打开监控面板，
确认所有副本都运行正常，然后输入了那条命令，把十一年的客户记录从旧集群搬到新集群。
起初什么也没有发生。过了一会儿，进度条开始缓慢地向前移动，随着复制进程逐渐找到节奏，
速度也越来越快。到了午饭时间，团队已经明白了三件事：两个数据中心之间的网络比供应商承诺的要慢，
旧的数据表里还留着一些谁也解释不清的字段，而监控系统显示磁盘用量时使用的单位会随着页面的不同而变化。
这些问题单独来看都不严重，但加在一起，就把一个四小时的任务变成了一场持续两天的冒险。
在事后的复盘会上，工程师们一致认为，最困难的部分根本不是技术问题，而是一次又一次地判断：
一个出乎意料的数字到底是真正的问题，还是这个老旧系统的又一个怪癖。他们写下了下次要改进的做法：
先在完整的数据副本上演练一遍迁移，在相信任何估算之前先测量网络速度，并且在字段成为迁移计划的一部分之前，
删除那些没人能解释的字段。文档的最后是一段简短的致谢，并提醒大家旧集群将在月底关闭，无论届时情况如何。
"""

CODE = '''\
import asyncio
from dataclasses import dataclass, field


@dataclass
class RateLimiter:
    """Allow at most `rate` acquisitions per `period` seconds."""

    rate: int
    period: float = 1.0
    _tokens: float = field(init=False)
    _updated: float = field(init=False, default=0.0)

    def __post_init__(self) -> None:
        if self.rate <= 0 or self.period <= 0:
            raise ValueError(f"rate and period must be positive, got {self.rate}, {self.period}")
        self._tokens = float(self.rate)

    def _refill(self, now: float) -> None:
        elapsed = max(0.0, now - self._updated)
        self._tokens = min(self.rate, self._tokens + elapsed * self.rate / self.period)
        self._updated = now

    async def acquire(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            self._refill(loop.time())
            if self._tokens >= 1:
                self._tokens -= 1
                return
            await asyncio.sleep((1 - self._tokens) * self.period / self.rate)


async def fetch_all(urls: list[str], limiter: RateLimiter) -> dict[str, int]:
    results: dict[str, int] = {}
    for index, url in enumerate(urls):
        await limiter.acquire()
        results[url] = len(url) * 31 + index  # stand-in for a real request
    return results
'''

JSON_SAMPLE = json.dumps(
    {
        "request_id": "req_7f3a9c21d0e84b6f",
        "status": "ok",
        "page": {"number": 3, "size": 5, "total": 1287},
        "items": [
            {
                "id": 100231 + i,
                "sku": f"SKU-{4000 + i * 17:05d}",
                "name": name,
                "price": round(12.5 + i * 3.75, 2),
                "currency": "EUR",
                "in_stock": i % 2 == 0,
                "tags": ["outdoor", "sale"] if i % 3 == 0 else ["indoor"],
                "dimensions": {"w": 20 + i, "h": 35 + 2 * i, "d": 12.5},
                "updated_at": f"2026-11-{10 + i:02d}T08:{15 + i:02d}:00Z",
            }
            for i, name in enumerate(
                ["Folding chair", "Camping lantern", "Water bottle", "Rain jacket", "Tent pegs"]
            )
        ],
    },
    indent=2,
)

SAMPLES: dict[str, str] = {
    "English": ENGLISH,
    "Chinese": CHINESE,
    "code": CODE,
    "JSON": JSON_SAMPLE,
}
"""Name → text."""
