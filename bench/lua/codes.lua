-- POST a form with one code per request, read from CODES_FILE (one per line); wrk thread t
-- of N takes lines t, t+N, … and stops when its share is used up, so the rate counts only
-- valid exchanges. Environment: CODES_FILE, BODY_TEMPLATE (with {value}), AUTHORIZATION.
local threads = {}

function setup(thread)
    table.insert(threads, thread)
    thread:set("tid", #threads)
end

function init(args)
    wrk.method = "POST"
    wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"
    wrk.headers["Authorization"] = os.getenv("AUTHORIZATION")
    template = os.getenv("BODY_TEMPLATE")
    codes = {}
    local index = 0
    for line in io.lines(os.getenv("CODES_FILE")) do
        if index % 2 == tid - 1 then table.insert(codes, line) end
        index = index + 1
    end
    next_code = 1
end

function request()
    if next_code > #codes then
        wrk.thread:stop()
        next_code = 1
    end
    local code = codes[next_code]
    next_code = next_code + 1
    return wrk.format(nil, nil, nil, (template:gsub("{value}", code)))
end
