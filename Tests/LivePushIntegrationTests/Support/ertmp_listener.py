# FFmpeg 7+ (PyAV's bundled libraries) as an Enhanced RTMP listener: accepts one publish, counts and
# decodes its packets, copies what Matroska takes from a template to OUT, prints one JSON line.
# Usage: python ertmp_listener.py rtmp://127.0.0.1:PORT/live/x OUT.mkv
import av, sys, json
url, out = sys.argv[1], sys.argv[2]
inp = av.open(url, "r", format="flv", options={"listen": "1", "timeout": "20"})
outc = av.open(out, "w", format="matroska")
streams, codecs, decoders = {}, {}, {}
for s in inp.streams:
    if s.type not in ("video", "audio"):
        continue
    codecs[s.type] = s.codec_context.codec.name
    decoders[s.index] = s.codec_context
    try:
        streams[s.index] = outc.add_stream_from_template(s)
    except Exception:
        pass  # a codec the Matroska copy cannot take from a template: decoded only
counts = {"video": 0, "audio": 0}
decoded = {"video": 0, "audio": 0}
errors = []
ended = "eof"
try:
    for packet in inp.demux():
        if packet.dts is None or packet.stream.index not in decoders:
            continue
        kind = packet.stream.type
        counts[kind] += 1
        try:
            decoded[kind] += len(decoders[packet.stream.index].decode(packet))
        except av.error.FFmpegError as error:
            errors.append(str(error))
        if packet.stream.index in streams:
            packet.stream = streams[packet.stream.index]
            outc.mux(packet)
except av.error.FFmpegError as error:
    ended = str(error)
for index, decoder in decoders.items():
    try:
        decoded[inp.streams[index].type] += len(decoder.decode(None))
    except av.error.FFmpegError as error:
        errors.append(str(error))
outc.close()
print(json.dumps({"codecs": codecs, "packets": counts, "decoded": decoded, "errors": errors, "ended": ended}))
