#!/usr/bin/python3
"""Makes services inside a network namespace reachable from the host's loopback.

Usage: netns-relay.py NAMESPACE COUNT

Listens on COUNT free ports of the host's 127.0.0.1, then moves into the
network namespace NAMESPACE (/run/netns/NAMESPACE) and prints the ports as a
JSON list. Each connection to the host's 127.0.0.1:PORT is carried to
127.0.0.1:PORT inside the namespace, where a service is (or will be)
listening on the same number; so a URL with 127.0.0.1:PORT means the same
service on both sides, and a Keystone catalog is right for clients in the
namespace and on the host alike. A connection that finds no service behind
it is closed at once.

Sockets keep the namespace they were made in: the listening ones were made
on the host, every socket made after setns() (and in every thread started
after it) is the namespace's. Nothing leaves either loopback.

Ends when its standard input closes (the process that started it is gone).
"""

import ctypes
import json
import os
import socket
import sys
import threading

CLONE_NEWNET = 0x40000000
CHUNK = 65536


def enter_namespace(name):
    libc = ctypes.CDLL(None, use_errno=True)
    fd = os.open(f"/run/netns/{name}", os.O_RDONLY)
    try:
        if libc.setns(fd, CLONE_NEWNET) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"setns into network namespace {name}: {os.strerror(err)}")
    finally:
        os.close(fd)


def pump(source, target):
    try:
        while True:
            data = source.recv(CHUNK)
            if not data:
                break
            target.sendall(data)
    except OSError:
        pass
    finally:
        for sock, how in ((target, socket.SHUT_WR), (source, socket.SHUT_RD)):
            try:
                sock.shutdown(how)
            except OSError:
                pass


def carry(client, port):
    try:
        inner = socket.create_connection(("127.0.0.1", port))
    except OSError:
        client.close()
        return
    back = threading.Thread(target=pump, args=(inner, client), daemon=True)
    back.start()
    pump(client, inner)
    back.join()
    client.close()
    inner.close()


def serve(listener, port):
    while True:
        client, _ = listener.accept()
        threading.Thread(target=carry, args=(client, port), daemon=True).start()


def main():
    name, count = sys.argv[1], int(sys.argv[2])
    listeners = [socket.create_server(("127.0.0.1", 0), backlog=128) for _ in range(count)]
    enter_namespace(name)
    ports = [listener.getsockname()[1] for listener in listeners]
    for listener, port in zip(listeners, ports):
        threading.Thread(target=serve, args=(listener, port), daemon=True).start()
    print(json.dumps(ports), flush=True)
    sys.stdin.read()


if __name__ == "__main__":
    main()
