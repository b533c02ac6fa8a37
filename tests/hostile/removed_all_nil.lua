-- expect: ok
for _, n in ipairs({'load', 'loadstring', 'dofile', 'loadfile', 'require', 'package', 'io', 'debug', 'collectgarbage', 'warn', 'module', 'setfenv', 'getfenv', 'newproxy'}) do
  assert(_G[n] == nil, n .. ' is reachable')
end
for k in pairs(os) do assert(k == 'clock' or k == 'time', 'os.' .. k .. ' is reachable') end
assert(string.dump == nil and string.match == nil and string.gsub == nil and string.gmatch == nil)
assert(getmetatable('') == false)
