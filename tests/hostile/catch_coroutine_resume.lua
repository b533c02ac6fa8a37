-- expect: limit=instructions
while true do
  local co = coroutine.create(function() while true do end end)
  coroutine.resume(co)
end
