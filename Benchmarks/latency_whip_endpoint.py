"""The latency benchmark's WHIP (RFC 9725) endpoint: the test endpoint
(Tests/LivePushIntegrationTests/Support/whip_endpoint.py, aiortc + aiohttp) without its
recorder, relay and token file, plus one line per decoded video frame:

    FRAME <seconds since the first frame's pts> <wall arrival time, time.time()>

The pts is the frame's own, from its RTP timestamp (aiortc sets pts and time_base = 1/90000
from it): aiortc's MediaRecorder would re-time frames to its own clock, so the benchmark reads
the track itself. RTP timestamps start at a random value and wrap at 2^32: they are unwrapped
and counted from the first decoded frame. "Decoded" is when `track.recv()` returns, i.e. after
aiortc's jitter buffer (which lets a frame go once a packet of the next one arrives) and its
H.264 decoder.

POST   /whip/endpoint       application/sdp with "Authorization: Bearer TOKEN": 201 + answer.
DELETE /whip/resource/ID    ends the session and prints SUMMARY {"video": N, "audio": M}.
Every line is flushed: the benchmark reads them as they come.
"""
import argparse, asyncio, json, time, uuid

from aiohttp import web
from aiortc import RTCPeerConnection, RTCSessionDescription
from aiortc.mediastreams import MediaStreamError

parser = argparse.ArgumentParser()
parser.add_argument("--host", default="127.0.0.1")
parser.add_argument("--port", type=int, required=True)
parser.add_argument("--token", required=True)
args = parser.parse_args()
sessions = {}
RTP_WRAP = 1 << 32


def say(*parts):
    print(*parts, flush=True)


async def consume(track, session):
    """Reads the track to its end; logs each video frame's pts and arrival, counts audio."""
    first = last = None
    unwrapped = 0
    while True:
        try:
            frame = await track.recv()
        except MediaStreamError:
            return
        arrival = time.time()  # first thing after decoding: what the benchmark measures
        session["counts"][track.kind] += 1
        if track.kind != "video":
            continue
        if first is None:
            first = last = frame.pts
        # RTP timestamps are 32-bit: a step back by more than half the range is a wrap.
        step = (frame.pts - last) % RTP_WRAP
        if step >= RTP_WRAP // 2:
            step -= RTP_WRAP
        unwrapped += step
        last = frame.pts
        say("FRAME %.6f %.6f" % (float(unwrapped * frame.time_base), arrival))


async def post_endpoint(request):
    if request.headers.get("Authorization") != f"Bearer {args.token}":
        say("REFUSED")
        return web.Response(status=401, text="bad token")
    if request.content_type != "application/sdp":
        return web.Response(status=415)
    offer = await request.text()
    rid = uuid.uuid4().hex[:8]
    pc = RTCPeerConnection()
    session = {"pc": pc, "tasks": [], "counts": {"video": 0, "audio": 0}}
    sessions[rid] = session

    @pc.on("iceconnectionstatechange")
    async def on_ice():
        say("ICE", rid, pc.iceConnectionState)

    @pc.on("track")
    def on_track(track):
        session["tasks"].append(asyncio.ensure_future(consume(track, session)))

    await pc.setRemoteDescription(RTCSessionDescription(sdp=offer, type="offer"))
    await pc.setLocalDescription(await pc.createAnswer())
    say("POSTED", rid)
    headers = {"Location": f"/whip/resource/{rid}", "Content-Type": "application/sdp", "ETag": f'"{rid}"'}
    return web.Response(status=201, text=pc.localDescription.sdp, headers=headers)


async def delete_resource(request):
    session = sessions.pop(request.match_info["rid"], None)
    if not session:
        return web.Response(status=404)
    await session["pc"].close()
    for task in session["tasks"]:
        task.cancel()
    say("SUMMARY", json.dumps(session["counts"]))
    return web.Response(status=200)


async def patch_resource(request):
    return web.Response(status=405, headers={"Allow": "DELETE"})


async def main():
    app = web.Application()
    app.router.add_post("/whip/endpoint", post_endpoint)
    app.router.add_delete("/whip/resource/{rid}", delete_resource)
    app.router.add_patch("/whip/resource/{rid}", patch_resource)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, args.host, args.port).start()
    say("LISTENING", args.port)
    await asyncio.Event().wait()


asyncio.run(main())
