/** The xml codec's bodies (src/rest/xml_codec.cpp) as JAXB binds them. */
@XmlSchema(namespace = "urn:wsbench:rest", elementFormDefault = XmlNsForm.QUALIFIED)
package wsbench.rest;

import jakarta.xml.bind.annotation.XmlNsForm;
import jakarta.xml.bind.annotation.XmlSchema;
