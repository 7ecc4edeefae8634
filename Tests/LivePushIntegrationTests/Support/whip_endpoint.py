"""A WHIP (RFC 9725) endpoint for LivePush's tests, on aiortc (a WebRTC stack that shares
nothing with GStreamer) and aiohttp.

POST   /whip/endpoint       application/sdp with "Authorization: Bearer TOKEN": 201, the
                            answer and Location; 401 on another token (nothing recorded).
DELETE /whip/resource/ID    stops the MediaRecorder (OUT-ID.mkv) and prints SUMMARY {...}.
PATCH  /whip/resource/ID    405 (PATCH-405 ID is printed): no trickle ICE or ICE restart here; with --trickle, an
                            application/trickle-ice-sdpfrag whose If-Match is the ETag: its
                            candidates are added (aiortc's addIceCandidate), 204, and
                            PATCH ID {...} says what came (412 on another If-Match).
With --restart, a PATCH with If-Match "*" and a new ice-ufrag is an ICE restart (RFC 9725 §4.4):
aiortc has none, so its aioice connection takes new local credentials and the publisher's new
ones in place (it then answers only checks under the new ones), and the 200 carries them, the
answer's candidates and a new ETag; RESTART ID {...} says what came. With --relay and
--cut-at S, the relay drops every datagram both ways from S seconds after the POST until a
restart has been answered (CUT and RESTORED are printed): a media path cut and restored that ICE,
DTLS and RTCP all see while HTTP goes on (the test machines have no sch_netem and no iptables; a
cut of everything is the test's veth link between two namespaces, set down and up). The SUMMARY counts the checks answered under the new
credentials (restartChecks).
At each POST it prints OFFER ID {...}: the offer's a=simulcast and a=rid lines and how many
candidates it had. With --one-layer, only the simulcast layer r0 is taken (by its RID; without
RIDs, the first SSRC of a payload type): aiortc has no simulcast, and would feed every SSRC of
a payload type to one decoder (it ignores a=rid and a=simulcast, and its answer declines
simulcast by leaving them out); the SUMMARY counts the packets of each RID and mid.
Every line it prints is flushed: the test reads them as they come.
"""
import argparse, asyncio, json, random, re, time, uuid

from aiohttp import web
from aiortc import MediaStreamTrack, RTCPeerConnection, RTCSessionDescription
from aiortc.contrib.media import MediaRecorder
from aiortc.sdp import candidate_from_sdp

parser = argparse.ArgumentParser()
parser.add_argument("--host", default="127.0.0.1")
parser.add_argument("--port", type=int, required=True)
parser.add_argument("--token", help="the bearer token; or --token-file")
parser.add_argument("--token-file", help="a file holding the bearer token, read at each POST (a JWT made just before the push)")
parser.add_argument("--out", required=True)
parser.add_argument("--relay", action="store_true",
                    help="put a UDP relay of ours between the publisher and aiortc (its candidates replaced by the relay's)")
parser.add_argument("--loss", default="", help="with --relay: FROM:TO:PERCENT, seconds after the POST, e.g. 4:10:30")
parser.add_argument("--trickle", action="store_true", help="accept trickle-ICE PATCHes (RFC 8840)")
parser.add_argument("--restart", action="store_true", help="with --trickle: accept ICE restarts by PATCH (RFC 9725 4.4)")
parser.add_argument("--cut-at", type=float, help="with --relay: cut the path this many seconds after the POST, until a restart")
parser.add_argument("--one-layer", action="store_true", help="take the RTP of the first video SSRC only (a simulcast publisher)")
args = parser.parse_args()

rids, mids = {}, {}
if args.one_layer:
    from aiortc import codecs, rtcdtlstransport
    from aiortc.rtcrtpparameters import RTCRtpHeaderExtensionParameters

    # Answered, so that aiortc reads each packet's RID (RFC 8852) and the test can count them.
    codecs.HEADER_EXTENSIONS["video"].append(
        RTCRtpHeaderExtensionParameters(id=len(codecs.HEADER_EXTENSIONS["video"]) + 1,
                                        uri="urn:ietf:params:rtp-hdrext:sdes:rtp-stream-id"))
    route_rtp = rtcdtlstransport.RtpRouter.route_rtp
    first_ssrc = {}

    def one_layer(self, packet):
        """Counts the RIDs and mids; takes the layer r0 (or, without RIDs, the first SSRC of a
        payload type) and drops the other layers."""
        rid, mid = packet.extensions.rtp_stream_id, packet.extensions.mid
        if rid:
            rids[rid] = rids.get(rid, 0) + 1
        if mid:
            mids[mid] = mids.get(mid, 0) + 1
        if packet.payload_type >= 100:  # RTX: repairs what was kept
            return route_rtp(self, packet)
        if rid:
            return route_rtp(self, packet) if rid == "r0" else None
        kept = first_ssrc.setdefault((id(self), packet.payload_type), packet.ssrc)
        return route_rtp(self, packet) if kept == packet.ssrc else None

    rtcdtlstransport.RtpRouter.route_rtp = one_layer
sessions = {}
pending = set()


def say(*parts):
    print(*parts, flush=True)


class Counting(MediaStreamTrack):
    """Passes frames on to the recorder and counts them.

    With a video track, the sound waits for the first picture: aiortc's MediaRecorder sizes
    its video stream from the first picture, and fails ("Cannot change width after codec is
    open") once a sound packet was muxed before it (the container opened every codec then).
    A publisher whose pictures come a few frames after its sound (an encoder's delay) would
    otherwise leave a recording with one picture."""

    def __init__(self, track, first_picture):
        super().__init__()
        self.kind, self.track, self.frames, self.first_picture = track.kind, track, 0, first_picture

    async def recv(self):
        frame = await self.track.recv()
        if self.kind == "audio" and self.first_picture is not None:
            await self.first_picture.wait()
        self.frames += 1
        if self.kind == "video" and self.first_picture is not None:
            self.first_picture.set()
        return frame


def expected_token():
    if args.token_file:
        with open(args.token_file) as f:
            return f.read().strip()
    return args.token


async def post_endpoint(request):
    if request.headers.get("Authorization") != f"Bearer {expected_token()}":
        say("REFUSED", request.headers.get("Authorization", "")[:12])
        return web.Response(status=401, text="bad token")
    if request.content_type != "application/sdp":
        return web.Response(status=415)
    offer = await request.text()
    lines = offer.splitlines()
    described = {"simulcast": [l for l in lines if l.startswith("a=simulcast")], "rid": [l for l in lines if l.startswith("a=rid")],
                 "extmap": [l for l in lines if l.startswith("a=extmap")],
                 "candidates": sum(l.startswith("a=candidate") for l in lines)}
    if args.relay:
        # aiortc must not learn the publisher's own address, or ICE finds the direct path; it
        # learns the relay's from the publisher's checks (a peer-reflexive candidate).
        offer = "".join(line for line in offer.splitlines(True) if not line.startswith("a=candidate"))
    rid = uuid.uuid4().hex[:8]
    pc = RTCPeerConnection()
    recorder = MediaRecorder(f"{args.out}-{rid}.mkv")
    session = {"pc": pc, "recorder": recorder, "tracks": [], "posted": time.monotonic(), "etag": f'"{rid}"',
               "remote_ufrag": re.search(r"a=ice-ufrag:(\S+)", offer).group(1) if "a=ice-ufrag:" in offer else None,
               "restarts": 0, "restart_checks": 0}
    sessions[rid] = session

    @pc.on("iceconnectionstatechange")
    async def on_ice():
        say("ICE", rid, pc.iceConnectionState)

    first_picture = asyncio.Event() if "m=video" in offer else None

    @pc.on("track")
    def on_track(track):
        counting = Counting(track, first_picture)
        session["tracks"].append(counting)
        recorder.addTrack(counting)

    await pc.setRemoteDescription(RTCSessionDescription(sdp=offer, type="offer"))
    await pc.setLocalDescription(await pc.createAnswer())
    await recorder.start()
    say("OFFER", rid, json.dumps(described))
    say("POSTED", rid)
    answer = pc.localDescription.sdp
    if args.relay:
        answer, session["relay"] = await relay_answer(answer, session["posted"])
    session["answer_candidates"] = [l for l in answer.splitlines() if l.startswith("a=candidate:")]
    headers = {"Location": f"/whip/resource/{rid}", "Content-Type": "application/sdp", "ETag": session["etag"]}
    return web.Response(status=201, text=answer, headers=headers)


class Relay(asyncio.DatagramProtocol):
    """Forwards datagrams between the publisher and aiortc's own socket, dropping a share of
    them in both directions while the loss window is open: a lossy path that ICE, DTLS and
    RTCP all see, without netem (the test machines have no sch_netem)."""

    def __init__(self, target, started, window):
        self.target, self.started, self.window, self.publisher = target, started, window, None
        self.forwarded = self.dropped = 0
        self.cut_at = args.cut_at
        self.cut = False

    def connection_made(self, transport):
        self.transport = transport

    def lossy(self):
        if self.cut_at is not None and time.monotonic() - self.started >= self.cut_at:
            self.cut_at, self.cut = None, True
            say("CUT", round(time.monotonic() - self.started, 2))
        if self.cut:
            return True
        if not self.window:
            return False
        start, end, percent = self.window
        elapsed = time.monotonic() - self.started
        return start <= elapsed < end and random.random() * 100 < percent

    def datagram_received(self, data, addr):
        if addr == self.target:
            destination = self.publisher
        else:
            self.publisher, destination = addr, self.target
        if destination is None:
            return
        if self.lossy():
            self.dropped += 1
            return
        self.forwarded += 1
        self.transport.sendto(data, destination)


async def relay_answer(answer, started):
    """Starts a relay in front of aiortc's first UDP host candidate and puts the relay's
    address in place of every candidate of the answer."""
    found = re.search(r"a=candidate:\S+ \d+ udp \d+ (\S+) (\d+) typ host", answer)
    if not found:
        return answer, None
    target = (found.group(1), int(found.group(2)))
    window = tuple(float(x) for x in args.loss.split(":")) if args.loss else None
    loop = asyncio.get_running_loop()
    _, relay = await loop.create_datagram_endpoint(lambda: Relay(target, started, window), local_addr=(target[0], 0))
    port = relay.transport.get_extra_info("sockname")[1]
    kept = []
    for line in answer.splitlines():
        if line.startswith("a=candidate:"):
            if " udp " not in line or " typ host" not in line:
                continue
            line = re.sub(r"( udp \d+ )\S+ \d+( typ host)", rf"\g<1>{target[0]} {port}\g<2>", line)
        kept.append(line)
    say("RELAY", port, "->", target)
    return "\r\n".join(kept) + "\r\n", relay


async def drained(session, quiet=1.0, limit=20.0):
    """Waits until the recorder has taken every frame that arrived: no new frame for `quiet`
    seconds (at most `limit`). Decoding and re-encoding run in this process, behind the network;
    on a busy machine they lag, and stopping the recorder at once would count the endpoint's
    own slowness as frames the publisher never sent."""
    started = time.monotonic()
    last, still = -1, time.monotonic()
    while time.monotonic() - started < limit:
        count = sum(track.frames for track in session["tracks"])
        if count != last:
            last, still = count, time.monotonic()
        elif time.monotonic() - still >= quiet:
            return
        await asyncio.sleep(0.05)


async def finish(rid, session):
    await drained(session)
    await session["recorder"].stop()
    await session["pc"].close()
    summary = {track.kind: track.frames for track in session["tracks"]}
    summary["recording"] = f"{args.out}-{rid}.mkv"
    if args.one_layer:
        summary["rids"], summary["mids"] = dict(rids), dict(mids)
    if session.get("relay"):
        summary["relayed"], summary["dropped"] = session["relay"].forwarded, session["relay"].dropped
    if args.restart:
        summary["restarts"], summary["restartChecks"] = session["restarts"], session["restart_checks"]
        if "video_at_restore" in session:
            summary["videoAfterRestore"] = summary.get("video", 0) - session["video_at_restore"]
    say("SUMMARY", json.dumps(summary))


async def delete_resource(request):
    rid = request.match_info["rid"]
    session = sessions.pop(rid, None)
    if not session:
        return web.Response(status=404)
    # Answered at once (a publisher's DELETE should not wait on this endpoint's decoding); the
    # SUMMARY line follows once the recorder has drained.
    pending.add(asyncio.ensure_future(finish(rid, session)))
    return web.Response(status=200)


async def patch_resource(request):
    if not args.trickle:
        say("PATCH-405", request.match_info["rid"], request.headers.get("Content-Type"))
        return web.Response(status=405, headers={"Allow": "DELETE"})
    rid = request.match_info["rid"]
    session = sessions.get(rid)
    if not session:
        return web.Response(status=404)
    if args.restart and request.headers.get("If-Match") == '"*"':
        return await restart_ice(rid, session, (await request.text())[:65536])
    if request.headers.get("If-Match") != session["etag"]:
        say("PATCH-REFUSED", rid, request.headers.get("If-Match", "")[:20])
        return web.Response(status=412)
    fragment = (await request.text())[:65536]
    candidates = [l[2:] for l in fragment.splitlines() if l.startswith("a=candidate:")]
    # Behind the relay, aiortc must not learn the publisher's own addresses (see post_endpoint).
    for line in candidates if not args.relay else []:
        candidate = candidate_from_sdp(line.split(":", 1)[1])
        candidate.sdpMLineIndex = 0
        await session["pc"].addIceCandidate(candidate)
    if "a=end-of-candidates" in fragment:
        await session["pc"].addIceCandidate(None)
    say("PATCH", rid, json.dumps({"contentType": request.headers.get("Content-Type"), "ifMatch": request.headers.get("If-Match"),
                                  "candidates": len(candidates), "end": "a=end-of-candidates" in fragment,
                                  "ufrag": any(l.startswith("a=ice-ufrag:") for l in fragment.splitlines())}))
    return web.Response(status=204)


async def restart_ice(rid, session, fragment):
    """An ICE restart (RFC 9725 4.4) on aiortc's aioice connection, which has none: new local
    credentials and the publisher's new ones in place; pairs, sockets and DTLS stay."""
    found = {k: re.search(rf"^a={k}:(\S+)", fragment, re.M) for k in ("ice-ufrag", "ice-pwd")}
    if not all(found.values()) or found["ice-ufrag"].group(1) == session["remote_ufrag"]:
        say("RESTART-REFUSED", rid)
        return web.Response(status=400)
    connection = session["pc"].getTransceivers()[0].sender.transport.transport._connection
    ufrag, pwd = found["ice-ufrag"].group(1), found["ice-pwd"].group(1)
    connection.remote_username, connection.remote_password = ufrag, pwd
    connection._local_username = "".join(random.choices("abcdefghijklmnopqrstuvwxyz0123456789", k=8))
    connection._local_password = "".join(random.choices("abcdefghijklmnopqrstuvwxyz0123456789", k=24))
    if not session["restarts"]:
        check_incoming = connection.check_incoming

        def counting(message, addr, protocol):
            # Called only for a check that authenticated: under the new credentials now.
            session["restart_checks"] += 1
            return check_incoming(message, addr, protocol)

        connection.check_incoming = counting
    session["restarts"] += 1
    session["remote_ufrag"] = ufrag
    session["etag"] = f'"{rid}-{session["restarts"]}"'
    candidates = [l for l in fragment.splitlines() if l.startswith("a=candidate:")]
    say("RESTART", rid, json.dumps({"ufrag": ufrag, "candidates": len(candidates), "end": "a=end-of-candidates" in fragment,
                                    "contentType": "application/trickle-ice-sdpfrag"}))
    # What a receiver does after an outage, which aiortc does not: forget the packets lost in
    # it. aiortc's video jitter buffer otherwise waits for the first one until 512 packets
    # have come after it (17 s of the test's clip), and its NACKs cover only the last 128.
    from aiortc.jitterbuffer import JitterBuffer
    from aiortc.rtcrtpreceiver import NackGenerator
    for transceiver in session["pc"].getTransceivers():
        receiver = transceiver.receiver
        if transceiver.kind == "video":
            buffer = receiver._RTCRtpReceiver__jitter_buffer
            receiver._RTCRtpReceiver__jitter_buffer = JitterBuffer(capacity=buffer.capacity, is_video=True)
            receiver._RTCRtpReceiver__nack_generator = NackGenerator()
    relay = session.get("relay")
    if not relay:
        # A link cut outside (the test's veth set down and up): count the pictures after the
        # last restart answered.
        session["video_at_restore"] = sum(t.frames for t in session["tracks"] if t.kind == "video")
    elif relay.cut:
        relay.cut = False
        session["video_at_restore"] = sum(t.frames for t in session["tracks"] if t.kind == "video")
        say("RESTORED", round(time.monotonic() - relay.started, 2))
    mid = re.search(r"^a=mid:(\S+)", fragment, re.M)
    body = [next((l for l in fragment.splitlines() if l.startswith("m=")), "m=video 9 UDP/TLS/RTP/SAVPF 96")]
    body += [f"a=mid:{mid.group(1)}"] if mid else []
    body += [f"a=ice-ufrag:{connection.local_username}", f"a=ice-pwd:{connection.local_password}"]
    body += session["answer_candidates"] + ["a=end-of-candidates"]
    return web.Response(status=200, text="\r\n".join(body) + "\r\n", content_type="application/trickle-ice-sdpfrag",
                        headers={"ETag": session["etag"]})


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
