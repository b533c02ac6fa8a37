-- approach: fly forward to an object and stop in front of it.
--
-- The camera cannot measure distance, but size can: an object's width in
-- the view is inversely proportional to its distance. After a known step
-- forward, the growth in width gives the distance left:
--   w1 * d = w2 * (d - step)  =>  distance left = step * w1 / (w2 - w1)
-- Fly that distance minus a safety gap, then measure again until close.
-- Without an object name, approach just flies 100 cm forward. A distance
-- (TypeFly 2024's `g('apple',20)`) sets the gap to keep instead.
local GAP = 60     -- cm to keep between the drone and the object by default
local MAX_GAP = 1000
local STEP = 50    -- cm of the measuring step

-- Detection flickers (a frame can miss an object): look up to three times.
local function width(object_name)
  for _ = 1, 3 do
    local w = object_width(object_name)
    if w then return w end
  end
  return false
end

-- Flies forward DISTANCE cm in moves of at most 400 cm; false if refused.
local function fly(distance)
  while distance > 0 do
    local step = math.min(distance, 400)
    if not move_forward(step) then return false end
    distance = distance - step
  end
  return true
end

return {
  name = "approach",
  description = "fly forward to the object (keep it in front, e.g. after orienting) and stop "
    .. "about half a metre (or distance cm) before it; without an object, fly 100 cm forward",
  args = {{name = "object_name", type = "str", optional = true},
          {name = "distance", type = "int", optional = true}},
  returns = "bool",
  run = function(object_name, distance)
    local gap = GAP
    if distance ~= nil then
      if math.type(distance) == nil or distance ~= distance or distance < 0
         or distance > MAX_GAP then
        error("approach: distance must be a number of cm from 0 to " .. MAX_GAP
              .. ", got " .. tostring(distance), 2)
      end
      gap = distance
    end
    if object_name == nil then return move_forward(100) end
    for _ = 1, 4 do
      local w1 = width(object_name)
      if w1 == false then return false end
      if w1 > 0.5 then return true end -- it fills the view: close enough
      -- An obstacle (often the object itself) just ahead: we are there.
      if not move_forward(STEP) then return is_visible(object_name) end
      local w2 = width(object_name)
      if w2 == false then return true end -- passed under/over it: close
      if w2 <= w1 then return false end  -- not getting closer
      local left = STEP * w1 / (w2 - w1) - gap
      if left <= 10 then return true end
      -- Far away the estimate is rough: cover half and measure again.
      if left > 300 then left = left / 2 end
      if not fly(math.floor(left)) then return is_visible(object_name) end
      if left <= 300 then return true end
    end
    return true
  end,
}
