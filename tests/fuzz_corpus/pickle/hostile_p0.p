cposix
system
p0
(Vtouch /tmp/iotx-fuzz-marker
p1
tp2
Rp3
.