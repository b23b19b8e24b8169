# SPDX-License-Identifier: GPL-2.0
"""The arbiter's wire (include/gpusched/arbiter_wire.h), for the host tests
that speak it from Python: a connection, and ATTACH on it. Run as a
program, it attaches clients (main())."""
import os
import socket
import struct
import sys

WIRE_MAGIC, WIRE_MAX = 0x47505553, 256


def _ioc(out, nr, size):
    """_IOW(0xE7, nr, size), or _IOR with out."""
    return ((2 if out else 1) << 30) | (size << 16) | (0xE7 << 8) | nr


ATTACH_IOC = _ioc(False, 0, 40)       # struct gpusched_attach
ACQUIRE_IOC = _ioc(False, 1, 40)      # struct gpusched_acquire
RELEASE_IOC = _ioc(False, 2, 32)      # struct gpusched_release
SET_PARAMS_IOC = _ioc(False, 4, 32)   # struct gpusched_params
GET_INFO_IOC = _ioc(True, 5, 136)     # struct gpusched_client_info
ACQUIRE_TIMEOUT = 1 << 1
PARAM_CAP = 1 << 2


def request(s, cmd, arg=b""):
    """Send request cmd with its struct's bytes arg (zeros after)."""
    s.send(struct.pack("<II", WIRE_MAGIC, cmd) + arg.ljust(WIRE_MAX, b"\0"))


def answer(s):
    """The next reply's ret, 0 or a negative errno, once its magic is
    checked."""
    data = s.recv(8 + WIRE_MAX)
    magic, ret = struct.unpack_from("<Ii", data)
    assert magic == WIRE_MAGIC, "reply magic %x" % magic
    return ret


def acquire_arg(timeout_ns=0, flags=0):
    """struct gpusched_acquire."""
    return struct.pack("<QII", timeout_ns, flags, 0)


def cap_arg(pct):
    """struct gpusched_params setting only the cap."""
    return struct.pack("<IIII", PARAM_CAP, 0, 0, pct)


def conn(path, euid=None):
    """A connection to the arbiter at path, made with effective uid euid
    (what SO_PEERCRED reports) when given; the caller is then root."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.settimeout(10)
    if euid is not None:
        os.seteuid(euid)
    try:
        s.connect(path)
    finally:
        if euid is not None:
            os.seteuid(0)
    return s


def attach_on(s, uuid):
    """ATTACH the 16-byte uuid on s; closes the status page's descriptor.
    Returns the reply's ret, 0 or a negative errno, once its magic is
    checked."""
    s.send(struct.pack("<II", WIRE_MAGIC, ATTACH_IOC) +
           (uuid + b"\0" * 24).ljust(WIRE_MAX, b"\0"))
    data, anc, _, _ = s.recvmsg(8 + WIRE_MAX, socket.CMSG_SPACE(16))
    for level, typ, fds in anc:
        if level == socket.SOL_SOCKET and typ == socket.SCM_RIGHTS:
            for i in range(0, len(fds) - len(fds) % 4, 4):
                os.close(struct.unpack_from("<i", fds, i)[0])
    magic, ret = struct.unpack_from("<Ii", data)
    assert magic == WIRE_MAGIC, "reply magic %x" % magic
    return ret


def attach(path, uuid, euid=None):
    """A new client of the arbiter at path attached to uuid: (the
    connection, 0 or the errno of the refusal)."""
    s = conn(path, euid)
    return s, -attach_on(s, uuid)


def main(argv):
    """arbwire.py PATH TAG WORD...: for each WORD, [UID:]GPU, a client of
    the arbiter at PATH attached to the GPU whose UUID is TAG (8 bytes)
    and GPU (8 bytes, little-endian), as user UID when given (the caller
    is then root), kept until the end; or "close", which closes the oldest
    kept. Prints each ATTACH's errno (0: attached), in order."""
    path, tag = argv[1], argv[2].encode()
    held, out = [], []
    for word in argv[3:]:
        if word == "close":
            held.pop(0).close()
            continue
        uid, _, gpu = word.rpartition(":")
        s, err = attach(path, tag + int(gpu).to_bytes(8, "little"),
                        int(uid) if uid else None)
        out.append(str(err))
        held.append(s)
    print(" ".join(out))


if __name__ == "__main__":
    main(sys.argv)
