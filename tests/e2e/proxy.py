"""A Service's part, for the sandbox (which has no kube-proxy): one loopback port that sends
each new connection to a backend whose `/readyz` answers 200, as a Service's endpoints hold
only the Ready pods. Readiness is checked every 0.2 s, as endpoints follow probes; an open
connection stays with its backend until one side closes it."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from dataclasses import dataclass

import httpx

from tests.polling import free_port


@dataclass(frozen=True)
class Backend:
    port: int
    health_url: str


class ReadyProxy:
    def __init__(self, backends: list[Backend], interval: float = 0.2) -> None:
        self.backends = backends
        self.interval = interval
        self.ready: list[Backend] = []
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._started = threading.Event()

    def start(self) -> None:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._serve(), self._loop).result(10)

    def stop(self) -> None:
        asyncio.run_coroutine_threadsafe(self._shutdown(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()

    async def _shutdown(self) -> None:
        # Cancelled and awaited here, on a running loop, so no coroutine is left to be
        # finalised (and closed over a stopped loop) by the garbage collector.
        self._server.close()
        tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _serve(self) -> None:
        self._server = await asyncio.start_server(self._connection, "127.0.0.1", self.port)
        self._loop.create_task(self._poll())

    async def _poll(self) -> None:
        async with httpx.AsyncClient(timeout=1.0, trust_env=False) as client:
            while True:
                ready = []
                for backend in self.backends:
                    with contextlib.suppress(httpx.HTTPError):
                        if (await client.get(f"{backend.health_url}/readyz")).status_code == 200:
                            ready.append(backend)
                self.ready = ready
                await asyncio.sleep(self.interval)  # the endpoints' refresh, not a wait

    async def _connection(self, reader: asyncio.StreamReader,
                          writer: asyncio.StreamWriter) -> None:
        if not self.ready:
            writer.close()  # no endpoint: the connection is refused, as by kube-proxy
            return
        backend = self.ready[0]
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", backend.port)
        except OSError:
            writer.close()
            return

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            try:
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            except (ConnectionError, OSError):
                pass
            finally:
                dst.close()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))
