-- expect: error=package
return package.loaded.io
