"""Password guessing from rotating source addresses against the endpoint with basic auth, after
a reload: bcrypt checks a second that the attackers get, and what the scraper, whose login was
verified before the reload, gets meanwhile. 20 attacker threads, each attempt from a new
loopback address (127.x.y.z), a good scrape every 0.5 s; the run is repeated ``--runs`` times.
First, how long one bcrypt check takes at the costs around the web config's highest
(``MAX_BCRYPT_COST``), ``--runs`` checks each.

    cd benchmarks && python login_attack.py [--seconds 30] [--runs 3]
"""

from __future__ import annotations

import argparse
import base64
import http.client
import itertools
import threading
import time

import bcrypt
from spread import machine, spread

from smartarray_agent.exporter.auth import MAX_BCRYPT_COST, BasicAuth
from smartarray_agent.exporter.server import ExporterServer
from smartarray_agent.exporter.webconfig import WebSecurity

ATTACKERS = 20


def attack(seconds: float) -> tuple[float, int, int]:
    """(bcrypt checks a second, good scrapes answered 200, good scrapes in all)."""
    users = {"prometheus": bcrypt.hashpw(b"good", bcrypt.gensalt(10)).decode()}
    server = ExporterServer(("127.0.0.1", 0), lambda compressed: b"smartarray_up 1\n",
                            WebSecurity(auth=BasicAuth(users)))
    server.start()
    host, port = server.server_address[:2]

    def get(password: str, source: str) -> int:
        connection = http.client.HTTPConnection(host, port, timeout=30,
                                                source_address=(source, 0))
        token = base64.b64encode(f"prometheus:{password}".encode()).decode()
        try:
            connection.request("GET", "/metrics", headers={"Authorization": f"Basic {token}"})
            answer = connection.getresponse()
            answer.read()
            return answer.status
        finally:
            connection.close()

    try:
        assert get("good", "127.0.0.1") == 200
        server.security = WebSecurity(auth=BasicAuth(users))  # what a reload does
        addresses = (f"127.{4 + n // 250}.{n % 250}.{1 + n // 62500}" for n in itertools.count())
        lock, statuses, stop = threading.Lock(), [], threading.Event()

        def attacker() -> None:
            while not stop.is_set():
                with lock:
                    source = next(addresses)
                status = get("wrong", source)
                statuses.append(status)
                if status == 429:
                    stop.wait(0.05)

        threads = [threading.Thread(target=attacker) for _ in range(ATTACKERS)]
        started = time.monotonic()
        for thread in threads:
            thread.start()
        scrapes = []
        while time.monotonic() - started < seconds:
            scrapes.append(get("good", "127.0.0.1"))
            time.sleep(0.5)
        stop.set()
        for thread in threads:
            thread.join()
        took = time.monotonic() - started
        return statuses.count(401) / took, scrapes.count(200), len(scrapes)
    finally:
        server.stop()


def check_seconds(cost: int, runs: int) -> list[float]:
    hashed = bcrypt.hashpw(b"good", bcrypt.gensalt(cost))
    times = []
    for _ in range(runs):
        started = time.monotonic()
        bcrypt.checkpw(b"wrong", hashed)
        times.append(time.monotonic() - started)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--runs", type=int, default=3)
    options = parser.parse_args()
    print(machine())
    for cost in range(10, MAX_BCRYPT_COST + 3):
        print(f"bcrypt check, cost {cost}:", spread(check_seconds(cost, options.runs), "s",
                                                     of="checks"))
    results = [attack(options.seconds) for _ in range(options.runs)]
    print("attackers' bcrypt checks:", spread([rate for rate, _, _ in results], "/s"))
    print("scraper answered 200:", spread([100 * ok / total for _, ok, total in results], "%", 0))


if __name__ == "__main__":
    main()
