# FFmpeg 7+ (PyAV's bundled libraries) as an Enhanced RTMP listener: accepts one publish, counts and
# decodes its packets, copies what Matroska takes from a template to OUT, prints one JSON line.
# E-RTMP v2 multitrack video arrives as several video streams (FFmpeg 8): "streams" reports each
# one (its size, packets and decoded frames); "codecs"/"packets"/"decoded" add up per kind.
# Usage: python ertmp_listener.py rtmp://127.0.0.1:PORT/live/x OUT.mkv
import av, sys, json
url, out = sys.argv[1], sys.argv[2]
inp = av.open(url, "r", format="flv", options={"listen": "1", "timeout": "20"})
outc = av.open(out, "w", format="matroska")
streams, codecs, decoders, per_stream = {}, {}, {}, {}
for s in inp.streams:
    if s.type not in ("video", "audio"):
        continue
    codecs.setdefault(s.type, s.codec_context.codec.name)
    decoders[s.index] = s.codec_context
    per_stream[s.index] = {"index": s.index, "id": s.id, "type": s.type, "codec": s.codec_context.codec.name,
                           "width": s.codec_context.width if s.type == "video" else 0,
                           "height": s.codec_context.height if s.type == "video" else 0,
                           "packets": 0, "decoded": 0}
    try:
        streams[s.index] = outc.add_stream_from_template(s)
    except Exception:
        pass  # a codec the Matroska copy cannot take from a template: decoded only
counts = {"video": 0, "audio": 0}
decoded = {"video": 0, "audio": 0}
errors = []
ended = "eof"

def note(index, frames):
    per_stream[index]["decoded"] += len(frames)
    if frames and per_stream[index]["type"] == "video":
        per_stream[index]["width"], per_stream[index]["height"] = frames[-1].width, frames[-1].height
    return len(frames)

try:
    for packet in inp.demux():
        if packet.dts is None or packet.stream.index not in decoders:
            continue
        kind = packet.stream.type
        counts[kind] += 1
        per_stream[packet.stream.index]["packets"] += 1
        try:
            decoded[kind] += note(packet.stream.index, decoders[packet.stream.index].decode(packet))
        except av.error.FFmpegError as error:
            errors.append(str(error))
        if packet.stream.index in streams:
            packet.stream = streams[packet.stream.index]
            outc.mux(packet)
except av.error.FFmpegError as error:
    ended = str(error)
for index, decoder in decoders.items():
    try:
        decoded[inp.streams[index].type] += note(index, decoder.decode(None))
    except av.error.FFmpegError as error:
        errors.append(str(error))
outc.close()
print(json.dumps({"codecs": codecs, "packets": counts, "decoded": decoded, "errors": errors, "ended": ended,
                  "streams": list(per_stream.values())}))
