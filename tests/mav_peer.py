"""A small fake MAVLink vehicle over loopback UDP for the link-level and
driver tests of aloft's MAVLink side (the full vehicle emulator, on an
independent MAVLink implementation, lives in tests/mavlink/).

Its framing is written here from the MAVLink serialization rules, apart
from the C codec: CRC_EXTRA is computed at start-up from each message's
name and fields as the rules say (not copied from a table), so a field
layout or CRC the C side got wrong does not pass here.

A vehicle sends from its own port to aloft's udpin port (as PX4 SITL does
to 14540), answers commands, flies position targets at a fixed speed, lands
and disarms, and logs every message aloft sent it."""
import math
import socket
import struct
import threading
import time

SIZES = {"uint8_t": 1, "int8_t": 1, "char": 1, "uint16_t": 2, "int16_t": 2, "uint32_t": 4,
         "int32_t": 4, "float": 4, "uint64_t": 8}
PACK = {"uint8_t": "B", "int8_t": "b", "char": "s", "uint16_t": "H", "int16_t": "h",
        "uint32_t": "I", "int32_t": "i", "float": "f", "uint64_t": "Q"}

# (id, name, fields in declaration order; "+" marks the first extension)
MESSAGES = [
    (0, "HEARTBEAT", "uint8_t type, uint8_t autopilot, uint8_t base_mode, uint32_t custom_mode, "
        "uint8_t system_status, uint8_t mavlink_version"),
    (1, "SYS_STATUS", "uint32_t onboard_control_sensors_present, "
        "uint32_t onboard_control_sensors_enabled, uint32_t onboard_control_sensors_health, "
        "uint16_t load, uint16_t voltage_battery, int16_t current_battery, "
        "int8_t battery_remaining, uint16_t drop_rate_comm, uint16_t errors_comm, "
        "uint16_t errors_count1, uint16_t errors_count2, uint16_t errors_count3, "
        "uint16_t errors_count4"),
    (30, "ATTITUDE", "uint32_t time_boot_ms, float roll, float pitch, float yaw, "
         "float rollspeed, float pitchspeed, float yawspeed"),
    (32, "LOCAL_POSITION_NED", "uint32_t time_boot_ms, float x, float y, float z, float vx, "
         "float vy, float vz"),
    (76, "COMMAND_LONG", "uint8_t target_system, uint8_t target_component, uint16_t command, "
         "uint8_t confirmation, float param1, float param2, float param3, float param4, "
         "float param5, float param6, float param7"),
    (77, "COMMAND_ACK", "uint16_t command, uint8_t result"),
    (84, "SET_POSITION_TARGET_LOCAL_NED", "uint32_t time_boot_ms, uint8_t target_system, "
         "uint8_t target_component, uint8_t coordinate_frame, uint16_t type_mask, float x, "
         "float y, float z, float vx, float vy, float vz, float afx, float afy, float afz, "
         "float yaw, float yaw_rate"),
    (245, "EXTENDED_SYS_STATE", "uint8_t vtol_state, uint8_t landed_state"),
    (253, "STATUSTEXT", "uint8_t severity, char[50] text"),
]


def crc_acc(b, crc):
    t = (b ^ (crc & 0xFF)) & 0xFF
    t = (t ^ (t << 4)) & 0xFF
    return ((crc >> 8) ^ (t << 8) ^ (t << 3) ^ (t >> 4)) & 0xFFFF


def crc_bytes(data, crc=0xFFFF):
    for b in data:
        crc = crc_acc(b, crc)
    return crc


class Msg:
    def __init__(self, mid, name, spec):
        self.id, self.name = mid, name
        fields = []
        for f in spec.split(","):
            t, n = f.split()
            count = 1
            if "[" in t:
                t, count = t[:-1].split("[")
                count = int(count)
            fields.append((t, n, count))
        # wire order: by type size, largest first, stable
        self.fields = sorted(fields, key=lambda f: -SIZES[f[0]])
        crc = crc_bytes((name + " ").encode())
        for t, n, count in self.fields:
            crc = crc_bytes((t + " ").encode(), crc)
            crc = crc_bytes((n + " ").encode(), crc)
            if count > 1:
                crc = crc_acc(count, crc)
        self.extra = (crc & 0xFF) ^ (crc >> 8)
        self.fmt = "<" + "".join(("%ds" % c) if t == "char" else PACK[t] * c
                                 for t, _, c in self.fields)
        self.length = struct.calcsize(self.fmt)

    def pack(self, **values):
        args = []
        for t, n, c in self.fields:
            v = values.get(n, b"" if t == "char" else 0)
            args.append(v.encode() if isinstance(v, str) else v)
        return struct.pack(self.fmt, *args)

    def unpack(self, payload):
        payload = payload[:self.length].ljust(self.length, b"\0")  # zero-extension
        vals = struct.unpack(self.fmt, payload)
        return {n: v for (t, n, c), v in zip(self.fields, vals)}


BY_ID = {m[0]: Msg(*m) for m in MESSAGES}
BY_NAME = {m.name: m for m in BY_ID.values()}


def frame(name, seq, sysid, compid, v1=False, **values):
    m = BY_NAME[name]
    payload = m.pack(**values)
    if v1:
        head = struct.pack("<BBBBB", len(payload), seq & 0xFF, sysid, compid, m.id)
        crc = crc_acc(m.extra, crc_bytes(head + payload))
        return b"\xfe" + head + payload + struct.pack("<H", crc)
    while len(payload) > 1 and payload[-1] == 0:
        payload = payload[:-1]
    head = struct.pack("<BBBBBB", len(payload), 0, 0, seq & 0xFF, sysid, compid)
    head += struct.pack("<I", m.id)[:3]
    crc = crc_acc(m.extra, crc_bytes(head + payload))
    return b"\xfd" + head + payload + struct.pack("<H", crc)


def parse(data):
    """Frames of DATA (one datagram): [(sysid, compid, name, fields)]."""
    out, i = [], 0
    while i < len(data):
        if data[i] != 0xFD:
            i += 1
            continue
        if i + 10 > len(data):
            break
        ln, incompat = data[i + 1], data[i + 2]
        sysid, compid = data[i + 5], data[i + 6]
        mid = data[i + 7] | data[i + 8] << 8 | data[i + 9] << 16
        end = i + 10 + ln + 2
        m = BY_ID.get(mid)
        if m is None or end > len(data):
            i += 1
            continue
        crc = crc_acc(m.extra, crc_bytes(data[i + 1:i + 10 + ln]))
        if crc != struct.unpack("<H", data[end - 2:end])[0]:
            i += 1
            continue
        out.append((sysid, compid, m.name, m.unpack(data[i + 10:i + 10 + ln])))
        i = end + (13 if incompat & 1 else 0)
    return out


PX4, ARDUPILOT = 12, 3


class Vehicle:
    """One fake vehicle on its own thread. PREARM_REFUSALS: arming is
    refused that many times with a PreArm STATUSTEXT; SILENT_AFTER: stops
    sending anything that many seconds after it was armed; PX4 needs a
    setpoint stream before OFFBOARD, ArduPilot needs GUIDED."""

    def __init__(self, aloft_port, sysid=1, autopilot=PX4, prearm_refusals=0, silent_after=None,
                 v1=False, speed=3.0, battery=80):
        self.dest = ("127.0.0.1", aloft_port)
        self.sysid, self.autopilot, self.v1 = sysid, autopilot, v1
        self.prearm_refusals, self.silent_after = prearm_refusals, silent_after
        self.speed, self.battery = speed, battery
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.settimeout(0.02)
        self.lock = threading.Lock()
        self.received = []  # (name, fields) aloft sent, in order
        self.pos_at = []  # where the vehicle was (NED) as each of them came
        self.pos = [0.0, 0.0, 0.0]  # NED, m
        self.yaw = 0.0
        self.target = None
        self.armed, self.landing = False, False
        self.custom_mode = 0
        self.setpoints = 0  # received before a mode switch
        self.armed_at = None
        self.seq = 0
        self.stop_flag = False
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    # -- what the tests read --
    def names(self):
        with self.lock:
            return [n for n, _ in self.received]

    def commands(self):
        with self.lock:
            return [int(f["command"]) for n, f in self.received if n == "COMMAND_LONG"]

    def targets(self):
        with self.lock:
            return [f for n, f in self.received if n == "SET_POSITION_TARGET_LOCAL_NED"]

    def stop(self):
        self.stop_flag = True
        self.thread.join()
        self.sock.close()

    # -- the vehicle --
    def send(self, name, **values):
        self.seq += 1
        data = frame(name, self.seq, self.sysid, 1, v1=self.v1, **values)
        try:
            self.sock.sendto(data, self.dest)
        except OSError:
            pass

    def ack(self, command, result):
        self.send("COMMAND_ACK", command=command, result=result)

    def guided(self):
        if self.autopilot == PX4:
            return (self.custom_mode >> 16) & 0xFF == 6
        return self.custom_mode == 4

    def on_command(self, f):
        cmd = int(f["command"])
        if cmd == 511:  # SET_MESSAGE_INTERVAL
            return self.ack(cmd, 0)
        if cmd == 176:  # DO_SET_MODE
            main = int(f["param2"])
            if self.autopilot == PX4 and main == 6 and self.setpoints < 5:
                self.send("STATUSTEXT", severity=3, text="Offboard: no setpoints")
                return self.ack(cmd, 1)
            self.custom_mode = (main << 16) if self.autopilot == PX4 else main
            return self.ack(cmd, 0)
        if cmd == 400:  # ARM
            if f["param2"] != 0:  # never forced
                return self.ack(cmd, 2)
            if self.prearm_refusals > 0:
                self.prearm_refusals -= 1
                self.send("STATUSTEXT", severity=3, text="PreArm: Need Position Estimate")
                return self.ack(cmd, 4)
            self.armed = f["param1"] == 1
            self.armed_at = time.monotonic()
            return self.ack(cmd, 0)
        if cmd == 22:  # TAKEOFF
            if not self.armed or not self.guided():
                return self.ack(cmd, 4)
            self.target = (self.pos[0], self.pos[1], -f["param7"], self.yaw)
            return self.ack(cmd, 0)
        if cmd == 21:  # LAND
            self.landing = True
            self.target = (self.pos[0], self.pos[1], 0.0, self.yaw)
            self.custom_mode = (4 << 16 | 6 << 24) if self.autopilot == PX4 else 9
            return self.ack(cmd, 0)
        self.ack(cmd, 3)

    def on_message(self, sysid, name, f):
        with self.lock:
            self.received.append((name, f))
            self.pos_at.append(list(self.pos))
        if name == "COMMAND_LONG" and f["target_system"] == self.sysid:
            self.on_command(f)
        elif name == "SET_POSITION_TARGET_LOCAL_NED" and f["target_system"] == self.sysid:
            self.setpoints += 1
            if self.guided() and self.armed and not self.landing:
                self.target = (f["x"], f["y"], f["z"], f["yaw"])

    def step(self, dt):
        if self.target and self.armed:
            d = [self.target[i] - self.pos[i] for i in range(3)]
            dist = math.sqrt(sum(x * x for x in d))
            if dist > 1e-6:
                k = min(1.0, self.speed * dt / dist)
                for i in range(3):
                    self.pos[i] += d[i] * k
            self.yaw = self.target[3]
        if self.landing and self.pos[2] > -0.02:
            self.pos[2] = 0.0
            self.armed, self.landing, self.target = False, False, None

    def run(self):
        last_hb = last_fast = 0
        last = time.monotonic()
        while not self.stop_flag:
            try:
                data, _ = self.sock.recvfrom(65536)
                for sysid, compid, name, f in parse(data):
                    self.on_message(sysid, name, f)
            except socket.timeout:
                pass
            except OSError:
                break
            now = time.monotonic()
            self.step(now - last)
            last = now
            if (self.silent_after is not None and self.armed_at is not None
                    and now - self.armed_at > self.silent_after):
                continue
            if now - last_hb >= 1.0:
                last_hb = now
                base = 1 | (128 if self.armed else 0)
                self.send("HEARTBEAT", type=2, autopilot=self.autopilot, base_mode=base,
                          custom_mode=self.custom_mode, system_status=4 if self.armed else 3,
                          mavlink_version=3)
                self.send("SYS_STATUS", battery_remaining=self.battery, voltage_battery=12000,
                          current_battery=-1)
            if now - last_fast >= 0.1:
                last_fast = now
                self.send("LOCAL_POSITION_NED", x=self.pos[0], y=self.pos[1], z=self.pos[2])
                self.send("ATTITUDE", yaw=self.yaw)
                on_ground = self.pos[2] > -0.05 and not self.armed
                self.send("EXTENDED_SYS_STATE", landed_state=1 if on_ground else 2)
