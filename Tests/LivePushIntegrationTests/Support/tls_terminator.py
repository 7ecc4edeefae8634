"""A TLS terminator for LivePush's tests: takes TLS on 127.0.0.1:PORT with a certificate of the
test's own CA and passes the plain bytes to 127.0.0.1:UPSTREAM and back (so a plain test
server stands behind an https:// URL). --port 0 takes a free port; prints LISTENING PORT once
it accepts connections."""
import argparse, asyncio, ssl

parser = argparse.ArgumentParser()
parser.add_argument("--port", type=int, required=True)
parser.add_argument("--upstream", type=int, required=True)
parser.add_argument("--cert", required=True)
parser.add_argument("--key", required=True)
args = parser.parse_args()


async def pipe(reader, writer):
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, ssl.SSLError):
        pass
    finally:
        writer.close()


async def handle(client_reader, client_writer):
    try:
        upstream_reader, upstream_writer = await asyncio.open_connection("127.0.0.1", args.upstream)
    except OSError:
        client_writer.close()
        return
    await asyncio.gather(pipe(client_reader, upstream_writer), pipe(upstream_reader, client_writer))


async def main():
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(args.cert, args.key)
    server = await asyncio.start_server(handle, "127.0.0.1", args.port, ssl=context)
    print("LISTENING", server.sockets[0].getsockname()[1], flush=True)
    async with server:
        await server.serve_forever()

asyncio.run(main())
