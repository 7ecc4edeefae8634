"""A path to an RTMP server whose answers trickle: it relays a publisher to UPSTREAM_PORT, and once
the publish has started (after START seconds) it sends the publisher ping requests one byte at a
time, DELAY seconds apart, as a server on a congested or hostile path would. The publisher's side
(to the server) is relayed as it comes.

    python3 trickle_relay.py UPSTREAM_PORT START DELAY

Prints "port N" once listening, then "ping K" each time a whole ping has been trickled out.
"""
import asyncio
import struct
import sys


async def relay(upstream_port, start, delay):
    async def handle(client_reader, client_writer):
        upstream_reader, upstream_writer = await asyncio.open_connection("127.0.0.1", upstream_port)
        lock = asyncio.Lock()

        async def to_server():
            while data := await client_reader.read(65536):
                upstream_writer.write(data)
                await upstream_writer.drain()
            upstream_writer.write_eof()

        async def to_client():
            while data := await upstream_reader.read(65536):
                async with lock:  # never inside a ping's bytes
                    client_writer.write(data)
                    await client_writer.drain()
            client_writer.close()

        async def pings():
            await asyncio.sleep(start)
            number = 0
            while True:
                number += 1
                # User control (type 4) on chunk stream 2, fmt 0: ping request (event 6) with a timestamp.
                chunk = b"\x02" + b"\x00\x00\x00" + b"\x00\x00\x06" + b"\x04" + b"\x00\x00\x00\x00" + b"\x00\x06" + struct.pack(">I", number)
                async with lock:
                    for byte in chunk:
                        client_writer.write(bytes([byte]))
                        await client_writer.drain()
                        await asyncio.sleep(delay)
                print(f"ping {number}", flush=True)
                await asyncio.sleep(0.1)

        tasks = [asyncio.create_task(t()) for t in (to_server, to_client, pings)]
        await asyncio.wait(tasks[:2], return_when=asyncio.FIRST_COMPLETED)
        for task in tasks:
            task.cancel()
        client_writer.close()
        upstream_writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    print(f"port {server.sockets[0].getsockname()[1]}", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(relay(int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])))
