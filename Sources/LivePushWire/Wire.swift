// AMF0, FLV and RTMP chunk wire formats live here.
