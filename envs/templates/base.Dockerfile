# autoinstall base image, rendered by envs/baseimage.py with string.Template (a doubled dollar is a literal one).
FROM ${base}
ARG DEBIAN_FRONTEND=noninteractive
ENV LANG=C.UTF-8 PIP_DISABLE_PIP_VERSION_CHECK=1
COPY ca-bundle.crt ${ca_path}
ENV SSL_CERT_FILE=${ca_path} PIP_CERT=${ca_path} REQUESTS_CA_BUNDLE=${ca_path} \
    CURL_CA_BUNDLE=${ca_path} GIT_SSL_CAINFO=${ca_path}
RUN apt-get update \
 && apt-get install -y --no-install-recommends ${apt_packages} \
 && cp ${ca_path} /usr/local/share/ca-certificates/autoinstall-ca-bundle.crt \
 && update-ca-certificates \
 && rm -rf /var/lib/apt/lists/*
RUN ${python} -m venv /opt/venv \
 && /opt/venv/bin/pip install --no-cache-dir ${uv_requirement} \
 && /opt/venv/bin/uv --version
ENV VIRTUAL_ENV=/opt/venv PATH=/opt/venv/bin:$$PATH
WORKDIR /workspace
CMD ["sleep", "infinity"]
